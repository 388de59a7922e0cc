import { getEventListeners } from 'node:events';
import { RedisFleet } from '@org/rlock-testing';
import { ClientPool, commandCalls, eventually } from './support.js';

describe('RLock waiting', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  it("puts one listener on a caller's signal shared by 30 waiting calls (no leak warning about it), and its abort ends every one", async () => {
    const holder = pool.make(fleet.url(0));
    const client = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
    await holder.getLock('shared-signal').acquire({ leaseMs: 30_000 });
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const shutdown = new AbortController();
      const lock = client.getLock('shared-signal');
      // Half bounded by waitMs (a timer of their own), half unbounded (the caller's signal is theirs).
      const calls = Array.from({ length: 30 }, (_, i) =>
        client.task(() => lock.lock({ leaseMs: 10_000, signal: shutdown.signal, ...(i % 2 === 0 ? { waitMs: 20_000 } : {}) })).catch((error: unknown) => error),
      );
      // Every call joined the local queue in the turn it was made; they wait once the head's channel is subscribed.
      const channel = `${holder.options.keyPrefix}:{shared-signal}:release:${client.clientId}`;
      expect(await eventually(async () => Number(((await fleet.client(0).pubsub('NUMSUB', channel)) as [string, number])[1]) === 1, 5_000)).toBe(true);
      expect(getEventListeners(shutdown.signal, 'abort').length).toBeLessThanOrEqual(1);
      shutdown.abort(new Error('shutting down'));
      const outcomes = await Promise.all(calls);
      expect(outcomes.map((outcome) => (outcome as Error).message)).toEqual(Array.from({ length: 30 }, () => 'shutting down'));
      expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('wakes a waiter right after the release, and the waiter sends almost no commands while it waits', async () => {
    const holder = pool.make(fleet.url(0));
    const waiter = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
    const redis = fleet.client(0);
    const handle = await holder.getLock('wake').acquire({ leaseMs: 60_000 });

    const callsBefore = (await commandCalls(redis, 'evalsha')) + (await commandCalls(redis, 'eval'));
    let acquiredAt = 0;
    const waiting = waiter
      .getLock('wake')
      .acquire({ leaseMs: 5_000 })
      .then((h) => {
        acquiredAt = performance.now();
        return h;
      });
    // The lease is 60 s and a waiter sleeps at most watchdogTimeoutMs / 3 = 10 s:
    // waking within the bound below can only come from the release message.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const callsWhileWaiting = (await commandCalls(redis, 'evalsha')) + (await commandCalls(redis, 'eval')) - callsBefore;
    expect(callsWhileWaiting).toBeLessThanOrEqual(2); // the first try, and the try after the subscription

    const releasedAt = performance.now();
    await handle.unlock();
    const next = await waiting;
    // A generous sanity bound (the benchmark measures the real figure): far below any TTL-based retry.
    expect(acquiredAt - releasedAt).toBeLessThan(1_000);
    await next.unlock();
  });

  it('wakes one local waiter per release, in arrival order, and all of them eventually', async () => {
    const holder = pool.make(fleet.url(0));
    const waiters = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
    const first = await holder.getLock('queue').acquire({ leaseMs: 60_000 });
    const order: number[] = [];
    const all = Array.from({ length: 5 }, async (_, i) => {
      await new Promise((resolve) => setTimeout(resolve, i * 20));
      const handle = await waiters.getLock('queue').acquire({ leaseMs: 5_000 });
      order.push(i);
      await handle.unlock();
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await first.unlock();
    await Promise.all(all);
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it('unsubscribes from its wake channel on the lock once nobody waits', async () => {
    const holder = pool.make(fleet.url(0));
    const waiter = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
    const redis = fleet.client(0);
    const channel = `${holder.options.keyPrefix}:{sub}:release:${waiter.clientId}`;
    const handle = await holder.getLock('sub').acquire({ leaseMs: 60_000 });
    const waiting = waiter.task(() => waiter.getLock('sub').tryLock({ waitMs: 300, leaseMs: 1_000 }));
    const subscribers = async () => Number(((await redis.pubsub('NUMSUB', channel)) as [string, number])[1]);
    expect(await eventually(async () => (await subscribers()) === 1, 2_000)).toBe(true);
    expect(await waiting).toBe(false);
    expect(await eventually(async () => (await subscribers()) === 0, 2_000)).toBe(true);
    await handle.unlock();
  });

  it("retries when the holder's TTL runs out even if no release is announced", async () => {
    const holder = pool.make(fleet.url(0));
    const waiter = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
    await holder.getLock('ttl').acquire({ leaseMs: 300 });
    const started = performance.now();
    // The waiter may wait up to 20 s, and its sleeps are capped at 10 s (a third
    // of the default watchdog lease): only a retry at the holder's TTL gets it
    // well before that.
    const handle = await waiter.getLock('ttl').acquire({ leaseMs: 1_000, waitMs: 20_000 });
    expect(performance.now() - started).toBeLessThan(3_000);
    await handle.unlock();
  });
});
