import { createClient, createRedlock, type RLockClient, type RedlockClient } from '@org/rlock';
import { RedisFleet, uniquePrefix } from '@org/rlock-testing';

/** `host:port`, as the CLI takes it, works wherever a URL does. */
describe('a server given as host:port', () => {
  let fleet: RedisFleet;
  const clients: (RLockClient | RedlockClient)[] = [];

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 3 });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(() => fleet.stop());

  it.each(['127.0.0.1', 'localhost'])('connects createClient({ redis: "%s:<port>" }) and takes a lock', async (host) => {
    const client = createClient({ redis: `${host}:${fleet.port(0)}`, keyPrefix: uniquePrefix() });
    clients.push(client);
    await client.getLock('order:1').withLock(async () => {
      expect(await client.getLock('order:1').isLocked()).toBe(true);
    });
    expect(await client.getLock('order:1').isLocked()).toBe(false);
  });

  it('connects createRedlock({ masters: ["host:port", …] }) to every master', async () => {
    const redlock = createRedlock({ masters: [0, 1, 2].map((i) => `127.0.0.1:${fleet.port(i)}`), keyPrefix: uniquePrefix() });
    clients.push(redlock);
    await redlock.getLock('report').withLock(async () => {
      expect(await redlock.getLock('report').isLocked()).toBe(true);
    });
  });
});
