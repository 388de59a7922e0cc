import { monitorEventLoopDelay } from 'node:perf_hooks';
import { RedisFleet } from '@org/rlock-testing';
import type { EngineContext } from '../../src/engine/engine-context.js';
import { ARRIVALS_PER_TURN } from '../../src/engine/wait-queue.js';
import { LockAcquireTimeoutError } from '../../src/errors.js';
import { ClientPool, OverlapProbe, commandCalls, eventually } from './support.js';

/**
 * The local waiters of one lock in one client share one timed retry (the head's): while a lock is held, N waiters cost
 * Redis what one does, and a release still serves every one of them in turn.
 */
describe('local waiters of one lock', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  const scripts = async (): Promise<number> => (await commandCalls(fleet.client(0), 'evalsha')) + (await commandCalls(fleet.client(0), 'eval'));

  it('cost at most 50 scripts a second while 2,000 of them wait, and all get the lock in turn after the release', async () => {
    const waiters = 2_000;
    const holder = pool.make(fleet.url(0));
    // Timed tries capped at a third of 3 s: each waiter on its own timer would try about once a second.
    const client = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix, watchdogTimeoutMs: 3_000 });
    const held = await holder.getLock('crowd').acquire({ leaseMs: 60_000 });
    const channel = `${holder.options.keyPrefix}:{crowd}:release:${client.clientId}`;

    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const probe = new OverlapProbe();
    const lock = client.getLock('crowd');
    const all = Array.from({ length: waiters }, () =>
      client.task(async () => {
        await lock.lock({ leaseMs: 10_000 });
        // Held across a turn of the event loop: two holders at once would both be inside.
        await probe.section(() => new Promise((resolve) => setImmediate(resolve)));
        await lock.unlock();
      }),
    );
    // Every call joined the local queue in the turn it was made; its channel is subscribed once the first waiter's is.
    expect(await eventually(async () => Number(((await fleet.client(0).pubsub('NUMSUB', channel)) as [string, number])[1]) === 1, 5_000)).toBe(true);

    const windowMs = 3_000;
    const before = await scripts();
    const from = performance.now();
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const perSecond = ((await scripts()) - before) / ((performance.now() - from) / 1_000);
    delay.disable();
    process.stdout.write(`${waiters} local waiters: ${perSecond.toFixed(1)} scripts/s, event-loop delay max ${(delay.max / 1e6).toFixed(1)} ms\n`);
    expect(perSecond).toBeLessThanOrEqual(50);
    expect(probe.entries).toBe(0);

    await held.unlock();
    await Promise.all(all);
    expect(probe.entries).toBe(waiters);
    expect(probe.maxInside).toBe(1);
  }, 120_000);

  it('join a few hundred a turn when 10,000 calls are made in one, send one script while they queue, and one try each once released', async () => {
    const waiters = 10_000;
    const holder = pool.make(fleet.url(0));
    const client = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
    const queues = (client as unknown as { context: EngineContext }).context.queues;
    const channel = `${holder.options.keyPrefix}:{throng}:release:${client.clientId}`;
    const held = await holder.getLock('throng').acquire({ leaseMs: 60_000 });
    const before = await scripts();

    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const probe = new OverlapProbe();
    const lock = client.getLock('throng');
    const all = Array.from({ length: waiters }, () =>
      client.task(async () => {
        await lock.lock({ leaseMs: 10_000 });
        await probe.section(() => new Promise((resolve) => setImmediate(resolve)));
        await lock.unlock();
      }),
    );
    // One sample a turn of the event loop: how many joined the local queue since the last.
    let joined = 0;
    let mostInOneTurn = 0;
    while (joined < waiters) {
      await new Promise((resolve) => setImmediate(resolve));
      const now = queues.get(channel)?.waiters.length ?? 0;
      mostInOneTurn = Math.max(mostInOneTurn, now - joined);
      joined = now;
    }
    delay.disable();
    const whileQueued = (await scripts()) - before;
    process.stdout.write(`${waiters} calls made in one turn: event-loop delay max ${(delay.max / 1e6).toFixed(1)} ms while they queue\n`);
    // The first call's try (refused), and the head's timed retry at most; the rest wait behind it and send nothing.
    expect(whileQueued).toBeLessThanOrEqual(2);
    expect(mostInOneTurn).toBeLessThanOrEqual(ARRIVALS_PER_TURN + 1);
    expect(probe.entries).toBe(0);

    await held.unlock();
    await Promise.all(all);
    expect(probe.entries).toBe(waiters);
    expect(probe.maxInside).toBe(1);
    // Served in turn: each sent one try when woken and one release, beside what was sent while they queued.
    expect((await scripts()) - before - whileQueued).toBeLessThanOrEqual(2 * waiters + 2);
  }, 180_000);

  it('end a call deferred behind thousands when its signal aborts, before those ahead of it have joined', async () => {
    const ahead = 5_000;
    const holder = pool.make(fleet.url(0));
    const client = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
    const queues = (client as unknown as { context: EngineContext }).context.queues;
    const channel = `${holder.options.keyPrefix}:{crowded}:release:${client.clientId}`;
    const held = await holder.getLock('crowded').acquire({ leaseMs: 60_000 });
    const lock = client.getLock('crowded');
    const all = Array.from({ length: ahead }, () =>
      client.task(async () => {
        await lock.lock({ leaseMs: 10_000 });
        await lock.unlock();
      }),
    );
    const controller = new AbortController();
    const last = client.task(() => lock.lock({ leaseMs: 10_000, signal: controller.signal }));
    controller.abort(new Error('gave up'));
    let joinedWhenItEnded = -1;
    await last.catch((error: unknown) => {
      joinedWhenItEnded = queues.get(channel)?.waiters.length ?? 0;
      expect(error).toEqual(new Error('gave up'));
    });
    expect(joinedWhenItEnded).toBeGreaterThanOrEqual(0);
    expect(joinedWhenItEnded).toBeLessThan(ahead / 2);
    await held.unlock();
    await Promise.all(all);
  }, 120_000);

  it('end a call deferred behind thousands when its waitMs runs out, before those ahead of it have joined', async () => {
    const ahead = 5_000;
    const holder = pool.make(fleet.url(0));
    const client = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
    const queues = (client as unknown as { context: EngineContext }).context.queues;
    const channel = `${holder.options.keyPrefix}:{late}:release:${client.clientId}`;
    const held = await holder.getLock('late').acquire({ leaseMs: 60_000 });
    const lock = client.getLock('late');
    const all = Array.from({ length: ahead }, () =>
      client.task(async () => {
        await lock.lock({ leaseMs: 10_000 });
        await lock.unlock();
      }),
    );
    // Out of time by the end of the turn that made it: no timer of its own is armed while it is deferred.
    const last = client.task(() => lock.lock({ leaseMs: 10_000, waitMs: 1 }));
    let joinedWhenItEnded = -1;
    await last.catch((error: unknown) => {
      joinedWhenItEnded = queues.get(channel)?.waiters.length ?? 0;
      expect(error).toBeInstanceOf(LockAcquireTimeoutError);
    });
    expect(joinedWhenItEnded).toBeGreaterThanOrEqual(0);
    expect(joinedWhenItEnded).toBeLessThan(ahead / 2);
    await held.unlock();
    await Promise.all(all);
  }, 120_000);

  it("bounds a waiter's SUBSCRIBE from the end of the caller's turn: a burst of calls that holds the event loop is no Redis timeout", async () => {
    const holder = pool.make(fleet.url(0));
    // commandTimeoutMs 1 s; the client's subscriber connection opens with its first waiter.
    const client = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix, watchdogTimeoutMs: 3_000 });
    await client.getLock('burst').isLocked();
    const held = await holder.getLock('burst').acquire({ leaseMs: 60_000 });
    const lock = client.getLock('burst');
    const calls = Array.from({ length: 2 }, () =>
      client.task(async () => {
        await lock.lock({ leaseMs: 5_000 });
        await lock.unlock();
      }),
    );
    // The second call queued behind the first's try and subscribed; the caller's own work (10,000 calls made in
    // one loop took this long here) holds the event loop past commandTimeoutMs before the connection can open.
    const until = performance.now() + 1_500;
    while (performance.now() < until);
    await held.unlock();
    await expect(Promise.all(calls)).resolves.toEqual([undefined, undefined]);
  });
});
