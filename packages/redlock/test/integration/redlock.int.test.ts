import {
  ClientClosedError,
  IllegalMonitorStateError,
  InvalidArgumentError,
  LockAcquireTimeoutError,
  LockLostError,
  type LockAcquiredEvent,
  type LockLostEvent,
} from '@org/rlock-core';
import { RedlockClient } from '@org/rlock-redlock';
import { createClient } from '@org/rlock';
import { RedisFleet, takeHoldLeakWarnings } from '@org/rlock-testing';
import { RedlockPool, aborted, eventually, lockOnMasters, plantHold, uniquePrefix } from './support.js';

const ALL = [0, 1, 2, 3, 4];

let fleet: RedisFleet;

/** Sets the PTTL of `key` on the given masters directly (an admin's PEXPIRE). */
async function setTtl(key: string, indexes: readonly number[], ttlMs: number): Promise<void> {
  await Promise.all(
    indexes.map(async (index) => {
      const redis = fleet.client(index);
      await redis.pexpire(key, ttlMs);
      redis.disconnect();
    }),
  );
}

/** How many connections subscribe to `channel` on master `index`. */
async function subscribers(channel: string, index: number): Promise<number> {
  const redis = fleet.client(index);
  try {
    const reply = (await redis.call('PUBSUB', 'NUMSUB', channel)) as [string, number];
    return Number(reply[1]);
  } finally {
    redis.disconnect();
  }
}

/** Blocks the event loop for `ms`: no timer of the client can run meanwhile. */
function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: a GC pause or a CPU-bound task, as far as the client's timers can tell
  }
}

/** Writes a hold of `owner` on the given masters directly, as the acquire script would leave it. */
async function plant(key: string, indexes: readonly number[], owner: string, ttlMs: number): Promise<void> {
  await Promise.all(
    indexes.map(async (index) => {
      const redis = fleet.client(index);
      await plantHold(redis, key, owner, ttlMs);
      redis.disconnect();
    }),
  );
}

describe('Redlock', () => {
  const pool = new RedlockPool();

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 5 });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  describe('lock and unlock', () => {
    it('takes the lock on every master with the same key, count 1, and releases it everywhere', async () => {
      const redlock = pool.make(fleet);
      const lock = redlock.getLock('order:1');
      const key = `${redlock.options.keyPrefix}:{order:1}`;
      await redlock.task(async () => {
        await lock.lock({ leaseMs: 10_000 });
        // Decided at a majority; the other answers join the hold as they come.
        expect(await eventually(async () => (await lockOnMasters(fleet, key, ALL)).every((hold) => hold.owner !== undefined), 2_000)).toBe(true);
        const holds = await lockOnMasters(fleet, key, ALL);
        expect(new Set(holds.map((hold) => hold.owner)).size).toBe(1);
        expect(await lock.isLocked()).toBe(true);
        expect(await lock.isHeldByCurrentTask()).toBe(true);
        const ttl = await lock.remainTimeToLive();
        expect(ttl).toBeGreaterThan(9_000);
        expect(ttl).toBeLessThanOrEqual(10_000);
        await lock.unlock();
      });
      expect(await lockOnMasters(fleet, key, ALL)).toEqual([{}, {}, {}, {}, {}]);
      expect(await lock.isLocked()).toBe(false);
      expect(await lock.remainTimeToLive()).toBe(-2);
    });

    it("reads as a lock held once, without a token, in a single-server client's inspect() of one master", async () => {
      const redlock = pool.make(fleet);
      const reader = createClient({ redis: fleet.url(0), keyPrefix: redlock.options.keyPrefix });
      try {
        await redlock.task(async () => {
          const lock = redlock.getLock('inspected');
          await lock.lock({ leaseMs: 10_000 });
          await lock.lock({ leaseMs: 10_000 });
          // Decided at a majority: master 0 may answer just after.
          expect(
            await eventually(async () => (await lockOnMasters(fleet, `${redlock.options.keyPrefix}:{inspected}`, [0]))[0]?.owner !== undefined, 2_000),
          ).toBe(true);
          const info = await reader.inspect('inspected');
          expect(info).toMatchObject({ kind: 'lock', holderCount: 1 });
          expect(info?.holders[0]).toMatchObject({ count: 1, token: undefined });
          expect(info?.holders[0]?.owner).toMatch(new RegExp(`^${redlock.clientId}:`));
          expect(info?.holders[0]?.ttlMs).toBeGreaterThan(5_000);
          await lock.unlock();
          await lock.unlock();
        });
      } finally {
        await reader.close();
      }
    });

    it('gives no fencing token and emits lockAcquired / lockReleased', async () => {
      const redlock = pool.make(fleet);
      const acquired: LockAcquiredEvent[] = [];
      const released: string[] = [];
      redlock.on('lockAcquired', (event) => acquired.push(event));
      redlock.on('lockReleased', (event) => released.push(event.name));
      const result = await redlock.getLock('fenced').withLock(({ token, signal }) => {
        expect(signal.aborted).toBe(false);
        return token;
      });
      expect(result).toBeUndefined();
      expect(acquired).toEqual([expect.objectContaining({ name: 'fenced', token: undefined, count: 1 })]);
      expect(released).toEqual(['fenced']);
    });

    it('lets tryLock give false while another task holds it, and lock({ waitMs }) time out', async () => {
      const redlock = pool.make(fleet);
      const lock = redlock.getLock('busy');
      const holder = await lock.acquire({ leaseMs: 10_000 });
      await redlock.task(async () => {
        expect(await lock.tryLock()).toBe(false);
        const started = performance.now();
        await expect(lock.lock({ waitMs: 150 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);
        expect(performance.now() - started).toBeGreaterThanOrEqual(140);
        expect(performance.now() - started).toBeLessThan(2_000);
        expect(await lock.isHeldByCurrentTask()).toBe(false);
      });
      await holder.unlock();
    });

    it('wakes a waiter through the release announcement, long before its timers', async () => {
      // watchdogTimeoutMs 30 s: a waiter's blind sleep would be up to 10 s.
      const redlock = pool.make(fleet);
      const other = pool.make(fleet, { keyPrefix: redlock.options.keyPrefix });
      const holder = await redlock.getLock('wake').acquire({ leaseMs: 20_000 });
      let acquiredAt = 0;
      const waiting = other.task(async () => {
        await other.getLock('wake').lock({ leaseMs: 5_000 });
        acquiredAt = performance.now();
        await other.getLock('wake').unlock();
      });
      // Let the waiter lose its rounds and go to sleep.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(acquiredAt).toBe(0);
      const releasedAt = performance.now();
      await holder.unlock();
      await waiting;
      expect(acquiredAt - releasedAt).toBeLessThan(1_000);
    });

    it('clears its partial grants at once when votes split', async () => {
      const redlock = pool.make(fleet);
      const key = `${redlock.options.keyPrefix}:{split}`;
      // Two other owners hold two masters each (as after a split vote); master 2 is free.
      await plant(key, [0, 1], 'x:1', 30_000);
      await plant(key, [3, 4], 'y:1', 30_000);
      await redlock.task(async () => {
        expect(await redlock.getLock('split').tryLock({ leaseMs: 10_000 })).toBe(false);
      });
      // Master 2 granted it and was released before tryLock answered.
      expect((await lockOnMasters(fleet, key, [2]))[0]).toEqual({});
    });

    it('takes the lock once a holder that vanished without releasing lets its TTL run out', async () => {
      const redlock = pool.make(fleet);
      const key = `${redlock.options.keyPrefix}:{vanished}`;
      await plant(key, ALL, 'crashed:1', 300);
      const started = performance.now();
      await redlock.getLock('vanished').withLock(() => undefined, { leaseMs: 1_000, waitMs: 5_000 });
      const waited = performance.now() - started;
      expect(waited).toBeGreaterThanOrEqual(250);
      expect(waited).toBeLessThan(3_000);
    });

    it('refuses an unlock by a task that does not hold it, changing nothing', async () => {
      const redlock = pool.make(fleet);
      const lock = redlock.getLock('not-mine');
      const holder = await lock.acquire({ leaseMs: 10_000 });
      await redlock.task(async () => {
        await expect(lock.unlock()).rejects.toBeInstanceOf(IllegalMonitorStateError);
      });
      expect(await lock.isLocked()).toBe(true);
      await holder.unlock();
    });
  });

  describe('tasks', () => {
    it('rejects Java-style calls outside a task before sending anything', async () => {
      const redlock = pool.make(fleet);
      const lock = redlock.getLock('no-task');
      await expect(lock.lock()).rejects.toBeInstanceOf(IllegalMonitorStateError);
      await expect(lock.tryLock()).rejects.toThrow(/redlock\.task\(fn\)|withLock|acquire/);
      await expect(lock.unlock()).rejects.toBeInstanceOf(IllegalMonitorStateError);
      await expect(lock.getHoldCount()).rejects.toBeInstanceOf(IllegalMonitorStateError);
      expect(await lock.isLocked()).toBe(false);
    });

    it('counts reentrancy in the client: the masters see count 1, only the last unlock releases', async () => {
      const redlock = pool.make(fleet);
      const lock = redlock.getLock('reentrant');
      const key = `${redlock.options.keyPrefix}:{reentrant}`;
      await redlock.task(async () => {
        await lock.lock({ leaseMs: 10_000 });
        await lock.lock({ leaseMs: 10_000 });
        expect(await lock.tryLock()).toBe(true);
        expect(await lock.getHoldCount()).toBe(3);
        // The answers after the majority join the hold too.
        expect(await eventually(async () => (await lockOnMasters(fleet, key, ALL)).every((hold) => hold.owner !== undefined), 2_000)).toBe(true);
        await lock.unlock();
        await lock.unlock();
        expect(await lock.isLocked()).toBe(true);
        await lock.unlock();
        expect(await lock.isLocked()).toBe(false);
        await expect(lock.unlock()).rejects.toBeInstanceOf(IllegalMonitorStateError);
      });
    });

    it('extends the lease on the masters for a nested acquisition with a longer lease, never shortens it', async () => {
      const redlock = pool.make(fleet);
      const lock = redlock.getLock('extend');
      await redlock.task(async () => {
        await lock.lock({ leaseMs: 2_000 });
        expect(await lock.remainTimeToLive()).toBeLessThanOrEqual(2_000);
        await lock.lock({ leaseMs: 20_000 });
        expect(await lock.remainTimeToLive()).toBeGreaterThan(19_000);
        await lock.lock({ leaseMs: 1_000 });
        expect(await lock.remainTimeToLive()).toBeGreaterThan(19_000);
        await lock.unlock();
        await lock.unlock();
        await lock.unlock();
      });
    });

    it('does not count a nested acquisition once the hold is past its deadline, even before any timer noticed', async () => {
      const watchdogMs = 600;
      const redlock = pool.make(fleet, { watchdogTimeoutMs: watchdogMs });
      const lock = redlock.getLock('late-watchdog');
      const key = `${redlock.options.keyPrefix}:{late-watchdog}`;
      const lost: LockLostEvent[] = [];
      redlock.on('lockLost', (event) => lost.push(event));
      await redlock.task(async () => {
        await lock.lock(); // a watchdog lease of 600 ms, renewed every 200 ms
        // Another owner has it on every master, as after our lease ran out unseen.
        await plant(key, ALL, 'other:1', 30_000);
        // The process stalls past the hold's deadline: neither the watchdog nor
        // any other timer has run when the nested acquisition comes.
        blockEventLoop(watchdogMs + 100);
        expect(await lock.tryLock()).toBe(false);
        expect(lost.map((event) => event.reason)).toEqual(['unreachable']);
        await expect(lock.unlock()).rejects.toBeInstanceOf(LockLostError);
      });
      expect((await lockOnMasters(fleet, key, ALL)).every((hold) => hold.owner === 'other:1')).toBe(true);
    });

    it('reads a hold this client knows lost as not held, whatever the masters still show', async () => {
      const redlock = pool.make(fleet);
      const lock = redlock.getLock('lost-locally');
      const key = `${redlock.options.keyPrefix}:{lost-locally}`;
      const handle = await lock.acquire({ leaseMs: 300 });
      const owner = (await lockOnMasters(fleet, key, [0]))[0]?.owner as string;
      await aborted(handle.signal, 2_000); // its fixed lease is over: lost (expired) here
      // The masters still show this owner holding it (as when the cleanup of the
      // lost hold did not reach them).
      expect(await eventually(async () => (await lockOnMasters(fleet, key, ALL)).every((hold) => hold.owner === undefined), 2_000)).toBe(true);
      await plant(key, ALL, owner, 30_000);
      await handle.run(async () => {
        expect(await lock.isHeldByCurrentTask()).toBe(false);
        expect(await lock.getHoldCount()).toBe(0);
      });
      expect(await lock.isLocked()).toBe(true);
      await expect(handle.unlock()).rejects.toBeInstanceOf(LockLostError);
      expect(await lock.forceUnlock()).toBe(true);
    });

    it('excludes two tasks of one client from each other', async () => {
      const redlock = pool.make(fleet);
      const lock = redlock.getLock('two-tasks');
      await redlock.task(() => lock.lock({ leaseMs: 10_000 }).then(() => undefined));
      expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['two-tasks']);
      // The first task still holds it (count 1 on the masters): another task waits.
      await redlock.task(async () => {
        expect(await lock.tryLock({ waitMs: 50 })).toBe(false);
      });
      expect(await lock.forceUnlock()).toBe(true);
    });

    it('lets acquire() work outside a task; handle.run reenters as the handle owner', async () => {
      const redlock = pool.make(fleet);
      const lock = redlock.getLock('handle');
      const handle = await lock.acquire({ leaseMs: 10_000 });
      expect(handle.token).toBeUndefined();
      await handle.run(async () => {
        await lock.lock({ leaseMs: 10_000 });
        expect(await lock.getHoldCount()).toBe(2);
        await lock.unlock();
      });
      await redlock.task(async () => expect(await lock.tryLock()).toBe(false));
      await handle.unlock();
      await expect(handle.run(() => 1)).rejects.toBeInstanceOf(IllegalMonitorStateError);
      await expect(handle.unlock()).rejects.toBeInstanceOf(IllegalMonitorStateError);
      expect(await lock.isLocked()).toBe(false);
    });

    it('checks arguments before anything else', async () => {
      const redlock = pool.make(fleet);
      expect(() => redlock.getLock('a{b}')).toThrow(InvalidArgumentError);
      expect(() => redlock.getLock('')).toThrow(InvalidArgumentError);
      const lock = redlock.getLock('args');
      await expect(lock.lock({ leaseMS: 5 } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(lock.acquire({ waitMs: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(lock.withLock('x' as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    });

    it('rejects a waiting call with the signal reason', async () => {
      const redlock = pool.make(fleet);
      const lock = redlock.getLock('abort');
      const holder = await lock.acquire({ leaseMs: 10_000 });
      const controller = new AbortController();
      const waiting = lock.acquire({ signal: controller.signal, leaseMs: 1_000 });
      setTimeout(() => controller.abort('enough'), 50);
      await expect(waiting).rejects.toBe('enough');
      await holder.unlock();
    });
  });

  describe('abort', () => {
    /**
     * Aborts the caller's signal in a microtask right after this client records
     * a won round: after the win, before lock() returns to the caller.
     */
    function abortOnWin(redlock: RedlockClient, controller: AbortController): void {
      redlock.on('lockAcquired', () => queueMicrotask(() => controller.abort(new Error('caller gave up'))));
    }

    it('gives back a round won by a waiter just as its caller aborted, instead of keeping it renewed', async () => {
      const redlock = pool.make(fleet, { watchdogTimeoutMs: 900 });
      const other = pool.make(fleet, { keyPrefix: redlock.options.keyPrefix });
      const key = `${redlock.options.keyPrefix}:{abort-win}`;
      const released: string[] = [];
      redlock.on('lockReleased', (event) => released.push(event.name));
      const holder = await other.getLock('abort-win').acquire({ leaseMs: 10_000 });
      const controller = new AbortController();
      abortOnWin(redlock, controller);
      const waiting = redlock.task(() => redlock.getLock('abort-win').lock({ signal: controller.signal }));
      // The waiter lost its first round and listens for the release announcement.
      expect(await eventually(() => subscribers(`${key}:release`, 0).then((count) => count > 0), 2_000)).toBe(true);
      await holder.unlock();
      await expect(waiting).rejects.toThrow('caller gave up');
      expect(released).toEqual(['abort-win']);
      expect(await eventually(async () => (await lockOnMasters(fleet, key, ALL)).every((hold) => hold.owner === undefined), 2_000)).toBe(true);
      await other.task(async () => expect(await other.getLock('abort-win').tryLock({ leaseMs: 1_000 })).toBe(true));
      expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['abort-win']);
      // Nothing of it is left in the client either: close has no hold to release.
      expect(await redlock.close()).toEqual({ released: [], failed: [] });
    });

    it('gives back a first round won just as its caller aborted', async () => {
      const redlock = pool.make(fleet);
      const key = `${redlock.options.keyPrefix}:{abort-first}`;
      const controller = new AbortController();
      abortOnWin(redlock, controller);
      await expect(redlock.getLock('abort-first').acquire({ signal: controller.signal })).rejects.toThrow('caller gave up');
      expect(await eventually(async () => (await lockOnMasters(fleet, key, ALL)).every((hold) => hold.owner === undefined), 2_000)).toBe(true);
      expect(await redlock.close()).toEqual({ released: [], failed: [] });
    });
  });

  describe('events', () => {
    it('reports a throwing listener as an error event, never from a timer, and still clears the lost hold', async () => {
      const redlock = pool.make(fleet);
      const lock = redlock.getLock('bad-listener');
      const key = `${redlock.options.keyPrefix}:{bad-listener}`;
      const errors: Error[] = [];
      redlock.on('error', (error) => errors.push(error));
      redlock.on('error', () => {
        throw new Error('error-listener bug'); // dropped: nowhere left to report it
      });
      redlock.on('lockLost', () => {
        throw new Error('lockLost-listener bug');
      });
      const handle = await lock.acquire({ leaseMs: 300 });
      // The keys outlive the lease the client counts on: only the sweep of the lost hold removes them.
      await setTtl(key, ALL, 30_000);
      await aborted(handle.signal, 2_000); // lost (expired) in the expiry timer, which ran the listeners
      expect(errors.map((error) => error.message)).toContain('lockLost-listener bug');
      expect(await eventually(async () => (await lockOnMasters(fleet, key, ALL)).every((hold) => hold.owner === undefined), 2_000)).toBe(true);
    });
  });

  describe('reads', () => {
    it('counts isLocked and remainTimeToLive per owner: partial grants of several owners are not a lock', async () => {
      const redlock = pool.make(fleet);
      const lock = redlock.getLock('owners');
      const key = `${redlock.options.keyPrefix}:{owners}`;
      // A split vote left in place: two owners on two masters each, one master free.
      await plant(key, [0, 1], 'x:1', 30_000);
      await plant(key, [2, 3], 'y:1', 30_000);
      expect(await lock.isLocked()).toBe(false);
      expect(await lock.remainTimeToLive()).toBe(-2);
      // x holds a majority (with different TTLs); y's longer TTL on master 3 does not count.
      await plant(key, [2], 'x:1', 10_000);
      await plant(key, [1], 'x:1', 20_000);
      await plant(key, [3], 'y:1', 60_000);
      expect(await lock.isLocked()).toBe(true);
      const ttl = await lock.remainTimeToLive();
      expect(ttl).toBeGreaterThan(9_000);
      expect(ttl).toBeLessThanOrEqual(10_000);
      expect(await lock.forceUnlock()).toBe(true);
    });
  });

  describe('withLock', () => {
    it('returns what fn returns, and fn’s error wins', async () => {
      const redlock = pool.make(fleet);
      const lock = redlock.getLock('with');
      expect(await lock.withLock(() => 42, { leaseMs: 5_000 })).toBe(42);
      await expect(
        lock.withLock(() => {
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await lock.isLocked()).toBe(false);
    });

    it('releases exactly the hold it took: a lost hold never releases a newer hold of the same task', async () => {
      const redlock = pool.make(fleet);
      const rival = pool.make(fleet, { keyPrefix: redlock.options.keyPrefix });
      const lock = redlock.getLock('generations');
      await redlock.task(async () => {
        const first = await lock.acquire({ leaseMs: 150 });
        await aborted(first.signal, 3_000);
        expect(await eventually(async () => !(await lock.isLocked()), 3_000)).toBe(true);
        const second = await lock.acquire({ leaseMs: 10_000 });
        await expect(first.unlock()).rejects.toBeInstanceOf(LockLostError);
        expect(await rival.task(() => rival.getLock('generations').tryLock({ leaseMs: 1_000 }))).toBe(false);
        expect(second.signal.aborted).toBe(false);
        await second.unlock();
      });
      expect(await lock.isLocked()).toBe(false);
    });
  });

  describe('forceUnlock', () => {
    it('releases on every master, wakes waiters and marks the local hold lost (forced)', async () => {
      const redlock = pool.make(fleet);
      const lock = redlock.getLock('forced');
      const lost: LockLostEvent[] = [];
      redlock.on('lockLost', (event) => lost.push(event));
      const handle = await lock.acquire({ leaseMs: 30_000 });
      const other = pool.make(fleet, { keyPrefix: redlock.options.keyPrefix });
      const waiting = other.getLock('forced').acquire({ leaseMs: 5_000 });
      expect(await lock.forceUnlock()).toBe(true);
      const reason = await aborted(handle.signal, 1_000);
      expect(reason).toBeInstanceOf(LockLostError);
      expect((reason as LockLostError).reason).toBe('forced');
      expect(lost.map((event) => event.reason)).toEqual(['forced']);
      const next = await waiting;
      await expect(handle.unlock()).rejects.toBeInstanceOf(LockLostError);
      await next.unlock();
      expect(await lock.forceUnlock()).toBe(false);
    });
  });

  describe('close', () => {
    it('rejects waiters, releases holds on the masters, leaves given connections open', async () => {
      const given = fleet.urls().map((_, index) => fleet.client(index));
      const redlock = new RedlockClient({ masters: given, keyPrefix: uniquePrefix() });
      const lock = redlock.getLock('closing');
      const handle = await lock.acquire({ leaseMs: 30_000 });
      const other = pool.make(fleet, { keyPrefix: redlock.options.keyPrefix });
      const otherHolder = await other.getLock('other').acquire({ leaseMs: 30_000 });
      const waiter = redlock.getLock('other').acquire({ leaseMs: 5_000 });
      const report = await redlock.close();
      await expect(waiter).rejects.toBeInstanceOf(ClientClosedError);
      expect(report).toEqual({ released: ['closing'], failed: [] });
      expect(((await aborted(handle.signal, 1_000)) as LockLostError).reason).toBe('closed');
      expect(await other.getLock('closing').isLocked()).toBe(false);
      expect(await Promise.all(given.map((redis) => redis.ping()))).toEqual(['PONG', 'PONG', 'PONG', 'PONG', 'PONG']);
      await expect(lock.tryLock()).rejects.toBeInstanceOf(IllegalMonitorStateError);
      await expect(lock.acquire()).rejects.toBeInstanceOf(ClientClosedError);
      await otherHolder.unlock();
    });

    it('takes fixed leases only without a renewer', async () => {
      const redlock = new RedlockClient({ masters: fleet.urls(), keyPrefix: uniquePrefix() });
      try {
        await expect(redlock.getLock('x').acquire()).rejects.toBeInstanceOf(InvalidArgumentError);
        const handle = await redlock.getLock('x').acquire({ leaseMs: 1_000 });
        await handle.unlock();
      } finally {
        await redlock.close();
      }
    });
  });
});
