import { RedisFleet, takeHoldLeakWarnings } from '@org/rlock-testing';
import { ClientPool, commandCalls, eventually, uniquePrefix } from './support.js';
import { fixture, startChild, type Child } from './child-processes.js';

const WAITERS = fixture('lock-waiters.mjs');

/**
 * A release wakes one waiting client, so an acquisition's cost does not grow
 * with the processes waiting, and a client that cannot take its wake does not
 * hold the others up. Timed tries here are 20 s apart and leases 60 s: a
 * waiter served within its 5 s waitMs was woken by a release.
 */
describe('lock wakes', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();
  const children: Child[] = [];

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) child.process.kill('SIGKILL');
    await pool.closeAll();
  });
  afterAll(() => fleet.stop());

  const scripts = async () => (await commandCalls(fleet.client(0), 'evalsha')) + (await commandCalls(fleet.client(0), 'eval'));

  it.each([4, 8])('runs at most 3 scripts per acquisition with waiters in %i processes', async (processes) => {
    const tasks = 20;
    const prefix = uniquePrefix();
    const holder = pool.make(fleet.url(0), { keyPrefix: prefix });
    const held = await holder.getLock('busy').acquire({ leaseMs: 60_000 });
    const started = Array.from({ length: processes }, () => {
      const child = startChild(WAITERS, { REDIS_URL: fleet.url(0), PREFIX: prefix, NAME: 'busy', TASKS: String(tasks) });
      children.push(child);
      return child;
    });
    await Promise.all(started.map((child) => child.line(/^connected/)));
    const before = await scripts();
    for (const child of started) child.process.stdin?.write('go\n');
    await Promise.all(started.map((child) => child.line(/^ready /)));
    await held.unlock();
    expect(await Promise.all(started.map((child) => child.exited))).toEqual(started.map(() => 0));
    const perAcquisition = ((await scripts()) - before) / (processes * tasks);
    // Each acquisition's own acquire and release (2), plus a few refused tries
    // per process (its tasks, arriving at once, queue behind its first try);
    // when every process's head tried on each release, ~processes + 1.
    expect(perAcquisition).toBeLessThanOrEqual(3);
    expect(await fleet.client(0).exists(`${prefix}:{busy}:clients`)).toBe(0);
  });

  it('runs at most 3 scripts per acquisition with 1,000 waiters in 4 processes that wait through their timed tries', async () => {
    const processes = 4;
    const tasks = 250;
    const prefix = uniquePrefix();
    const holder = pool.make(fleet.url(0), { keyPrefix: prefix });
    const held = await holder.getLock('crowd').acquire({ leaseMs: 60_000 });
    // Timed tries a second apart (a third of 3 s): a waiter with a timer of its own would try about once a second.
    const env = { REDIS_URL: fleet.url(0), PREFIX: prefix, NAME: 'crowd', TASKS: String(tasks), WATCHDOG_MS: '3000' };
    const started = Array.from({ length: processes }, () => {
      const child = startChild(WAITERS, env);
      children.push(child);
      return child;
    });
    await Promise.all(started.map((child) => child.line(/^connected/)));
    const before = await scripts();
    for (const child of started) child.process.stdin?.write('go\n');
    await Promise.all(started.map((child) => child.line(/^ready /)));
    // Held through several timed tries: the local waiters of each process share one.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await held.unlock();
    expect(await Promise.all(started.map((child) => child.exited))).toEqual(started.map(() => 0));
    const perAcquisition = ((await scripts()) - before) / (processes * tasks);
    process.stdout.write(`${processes * tasks} waiters in ${processes} processes: ${perAcquisition.toFixed(2)} scripts per acquisition\n`);
    expect(perAcquisition).toBeLessThanOrEqual(3);
  }, 120_000);

  it('skips a client killed while registered: the next waiting client gets the lock', async () => {
    const prefix = uniquePrefix();
    const holder = pool.make(fleet.url(0), { keyPrefix: prefix, watchdogTimeoutMs: 60_000 });
    const waiter = pool.make(fleet.url(0), { keyPrefix: prefix, watchdogTimeoutMs: 60_000 });
    const redis = fleet.client(0);
    const held = await holder.getLock('k').acquire({ leaseMs: 60_000 });
    const doomed = startChild(WAITERS, { REDIS_URL: fleet.url(0), PREFIX: prefix, NAME: 'k', TASKS: '1', MODE: 'hang' });
    children.push(doomed);
    await doomed.line(/^connected/);
    doomed.process.stdin?.write('go\n');
    const doomedId = (await doomed.line(/^ready /)).split(' ')[1] as string;
    const next = waiter.task(() => waiter.getLock('k').tryLock({ waitMs: 5_000, leaseMs: 5_000 }));
    // Registered behind the doomed client.
    expect(await eventually(async () => (await redis.zrange(`${prefix}:{k}:clients`, '0', '-1')).length === 2, 2_000)).toBe(true);
    expect((await redis.zrange(`${prefix}:{k}:clients`, '0', '-1'))[0]).toBe(doomedId);
    doomed.process.kill('SIGKILL');
    await doomed.exited;
    expect(await eventually(async () => Number((await redis.pubsub('NUMSUB', `${prefix}:{k}:release:${doomedId}`))[1]) === 0, 2_000)).toBe(true);
    await held.unlock();
    expect(await next).toBe(true);
    expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['k']);
    expect(await redis.zscore(`${prefix}:{k}:clients`, doomedId)).toBeNull();
  });

  it('passes the wake on when the woken waiter gives up as it comes', async () => {
    const prefix = uniquePrefix();
    const options = { keyPrefix: prefix, watchdogTimeoutMs: 60_000 };
    const holder = pool.make(fleet.url(0), options);
    const first = pool.make(fleet.url(0), options);
    const second = pool.make(fleet.url(0), options);
    const redis = fleet.client(0);
    const held = await holder.getLock('k').acquire({ leaseMs: 60_000 });
    const giveUp = new AbortController();
    const gaveUp = first.task(() => first.getLock('k').lock({ waitMs: 30_000, leaseMs: 5_000, signal: giveUp.signal }));
    expect(await eventually(async () => (await redis.zrange(`${prefix}:{k}:clients`, '0', '-1')).length === 1, 2_000)).toBe(true);
    const next = second.task(() => second.getLock('k').tryLock({ waitMs: 5_000, leaseMs: 5_000 }));
    expect(await eventually(async () => (await redis.zrange(`${prefix}:{k}:clients`, '0', '-1')).length === 2, 2_000)).toBe(true);
    // The first client's waiter gives up the moment its client is woken.
    const listener = fleet.client(0);
    listener.on('message', () => giveUp.abort(new Error('gave up')));
    await listener.subscribe(`${prefix}:{k}:release:${first.clientId}`);
    await held.unlock();
    await expect(gaveUp).rejects.toThrow('gave up');
    expect(await next).toBe(true);
    expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['k']);
  });

  it('leaves no waiting-clients key once every waiter is served, and none for a tryLock that does not wait', async () => {
    const prefix = uniquePrefix();
    const holder = pool.make(fleet.url(0), { keyPrefix: prefix });
    const other = pool.make(fleet.url(0), { keyPrefix: prefix });
    const redis = fleet.client(0);
    const held = await holder.getLock('k').acquire({ leaseMs: 60_000 });
    expect(await other.task(() => other.getLock('k').tryLock({ waitMs: 0, leaseMs: 5_000 }))).toBe(false);
    expect(await redis.exists(`${prefix}:{k}:clients`)).toBe(0);
    const waiting = Array.from({ length: 3 }, () =>
      other.task(async () => {
        await other.getLock('k').lock({ leaseMs: 5_000, waitMs: 10_000 });
        await other.getLock('k').unlock();
      }),
    );
    expect(await eventually(async () => (await redis.exists(`${prefix}:{k}:clients`)) === 1, 2_000)).toBe(true);
    await held.unlock();
    await Promise.all(waiting);
    expect(await redis.exists(`${prefix}:{k}:clients`)).toBe(0);
  });
});
