import { Redis } from 'ioredis';
import { RedisFleet, evalScript } from '@org/rlock-testing';
import { SCRIPTS, plainLockKeys, type EmbeddedScript } from '@org/rlock-core/internal';
import { uniquePrefix } from './support.js';

/**
 * Script-level: a script whose PUBLISH an ACL refuses keeps its writes (Redis never rolls a script back),
 * goes on, and answers {'rlock:publish-refused', <Redis's error>, <its reply>}; with channel rights its reply
 * is as its header says. Behaviour through the API: packages/rlock/test/integration/publish-refused.int.test.ts.
 */
describe('scripts under a user without channel rights', () => {
  let fleet: RedisFleet;
  let admin: Redis;
  let restricted: Redis;

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
    admin = fleet.client(0);
    await admin.call('ACL', 'SETUSER', 'nochannels', 'on', '>pw', '~*', 'resetchannels', '+@all');
    restricted = new Redis({ port: fleet.port(0), username: 'nochannels', password: 'pw' });
  });
  afterAll(async () => {
    restricted.disconnect();
    await admin.quit();
    await fleet.stop();
  });
  const run = <A>(script: EmbeddedScript<A>, args: NoInfer<A>) => evalScript(restricted, script, args);
  const refused = (reply: unknown): unknown[] => ['rlock:publish-refused', expect.stringMatching(/can't publish to the channel/) as unknown, reply];

  it('semaphore release: counts the permits once and reports the refusal beside its reply; a replay publishes nothing', async () => {
    const permits = `${uniquePrefix()}:{quota}`;
    const args = {
      permits,
      marker: `${permits}:op:client:r1`,
      count: 3,
      replayWindowMs: 2_000,
      sharded: '0',
      channel: `${permits}:permits`,
    };
    expect(await run(SCRIPTS.semaphoreRelease, args)).toEqual(refused([3, 0]));
    expect(await run(SCRIPTS.semaphoreRelease, args)).toEqual([3, 0]);
    expect(await admin.get(permits)).toBe('3');
  });

  it('latch countDown: deletes the latch at zero and reports the refusal', async () => {
    const count = `${uniquePrefix()}:{batch}`;
    await admin.set(count, '1');
    const args = { count, marker: `${count}:op:client:c1`, kind: `${count}:kind`, replayWindowMs: 2_000, sharded: '0', channel: `${count}:zero` };
    expect(await run(SCRIPTS.latchCountDown, args)).toEqual(refused(0));
    expect(await admin.exists(count)).toBe(0);
    expect(await run(SCRIPTS.latchCountDown, args)).toBe(0);
  });

  it('lock wake: stops at the first refused wake, so the clients behind keep their places', async () => {
    const keys = plainLockKeys(uniquePrefix(), 'job', 'me');
    await admin.zadd(keys.clients, '1', 'b', '2', 'c');
    expect(await run(SCRIPTS.lockWake, { lock: keys.lock, clients: keys.clients, clientId: 'me', sharded: '0' })).toEqual(refused(0));
    expect(await admin.zrange(keys.clients, '0', '-1')).toEqual(['c']);
  });

  it('answers as its header says when the user may publish', async () => {
    const keys = plainLockKeys(uniquePrefix(), 'job', 'me');
    await admin.zadd(keys.clients, '1', 'b');
    expect(await evalScript(admin, SCRIPTS.lockWake, { lock: keys.lock, clients: keys.clients, clientId: 'me', sharded: '0' })).toBe(0);
    expect(await admin.exists(keys.clients)).toBe(0);
  });
});
