import type { Redis } from 'ioredis';
import { RedisFleet, evalScript } from '@org/rlock-testing';
import { SCRIPTS, fenceKey, parseHold, type EmbeddedScript } from '@org/rlock-core/internal';
import { uniquePrefix } from './support.js';

/**
 * Script-level tests of the semaphore, the permit-expirable semaphore, the
 * count-down latch and the fair lock: each script by EVAL of its text with raw KEYS and ARGV
 * (by name, in its header's order), its raw reply and the keys it leaves checked against its header (and the
 * public layout in the core README). Behaviour through the API is tested in
 * semaphore / permit-semaphore / count-down-latch .int.test.ts.
 */
describe('coordination scripts', () => {
  let fleet: RedisFleet;
  let redis: Redis;

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
    redis = fleet.client(0);
  });
  afterAll(() => fleet.stop());
  const run = <A>(script: EmbeddedScript<A>, args: NoInfer<A>) => evalScript(redis, script, args);

  const WINDOW = 2_000;

  /** Collects the messages of `channel` on a subscriber connection of its own. */
  async function listen(channel: string): Promise<{ messages: string[]; flush(): Promise<void> }> {
    const listener = fleet.client(0);
    const messages: string[] = [];
    listener.on('message', (_channel: string, message: string) => messages.push(message));
    await listener.subscribe(channel);
    // A message published before a PING reaches the listener before its reply.
    return { messages, flush: async () => void (await listener.ping()) };
  }

  it('are registered under the SHA1 the generator computed', async () => {
    for (const [id, script] of Object.entries(SCRIPTS)) {
      if (!/^(semaphore|permitSemaphore|latch|fairLock)/.test(id)) continue;
      expect(await redis.script('LOAD', script.lua)).toBe(script.sha);
    }
  });

  describe('semaphore', () => {
    const fresh = () => {
      const permits = `${uniquePrefix()}:{quota}`;
      return { permits, kind: `${permits}:kind`, channel: `${permits}:permits`, op: (op: string) => `${permits}:op:client:${op}` };
    };
    type Keys = ReturnType<typeof fresh>;
    const acquire = (k: Keys, op: string, n: number) =>
      run(SCRIPTS.semaphoreAcquire, { permits: k.permits, marker: k.op(op), count: n, replayWindowMs: WINDOW }) as Promise<number[]>;
    const release = (k: Keys, op: string, n: number) =>
      run(SCRIPTS.semaphoreRelease, {
        permits: k.permits,
        marker: k.op(op),
        count: n,
        replayWindowMs: WINDOW,
        sharded: '0',
        channel: k.channel,
      }) as Promise<number[]>;
    const cancel = (k: Keys, op: string, n: number) =>
      run(SCRIPTS.semaphoreCancel, { permits: k.permits, marker: k.op(op), kind: k.kind, count: n, replayWindowMs: WINDOW, sharded: '0', channel: k.channel });
    const trySet = (k: Keys, op: string, n: number) =>
      run(SCRIPTS.semaphoreTrySetPermits, {
        permits: k.permits,
        marker: k.op(op),
        kind: k.kind,
        count: n,
        replayWindowMs: WINDOW,
        sharded: '0',
        channel: k.channel,
      });
    const add = (k: Keys, op: string, n: number) =>
      run(SCRIPTS.semaphoreAddPermits, {
        permits: k.permits,
        marker: k.op(op),
        kind: k.kind,
        delta: n,
        replayWindowMs: WINDOW,
        sharded: '0',
        channel: k.channel,
      });
    const drain = (k: Keys, op: string) => run(SCRIPTS.semaphoreDrainPermits, { permits: k.permits, marker: k.op(op), replayWindowMs: WINDOW });

    describe('acquire', () => {
      it('refuses on an unset semaphore and creates nothing', async () => {
        const k = fresh();
        expect(await acquire(k, 'a', 1)).toEqual([0, 0]);
        expect(await redis.exists(k.permits, k.op('a'))).toBe(0);
      });

      it('takes n permits when that many are available, and refuses more without changing anything', async () => {
        const k = fresh();
        await redis.set(k.permits, '5');
        expect(await acquire(k, 'a', 3)).toEqual([1, 2]);
        expect(await redis.get(k.permits)).toBe('2');
        expect(await acquire(k, 'b', 3)).toEqual([0, 2]);
        expect(await redis.get(k.permits)).toBe('2');
        expect(await redis.exists(k.op('b'))).toBe(0);
      });

      it('answers a replay of a granted op as granted without taking twice, its marker living the replay window', async () => {
        const k = fresh();
        await redis.set(k.permits, '5');
        expect(await acquire(k, 'same', 2)).toEqual([1, 3]);
        expect(await acquire(k, 'same', 2)).toEqual([1, 3]);
        expect(await redis.get(k.permits)).toBe('3');
        expect(await redis.get(k.op('same'))).toBe('acquired');
        const ttl = await redis.pttl(k.op('same'));
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(WINDOW);
      });

      it('refuses an op that was cancelled before it arrived', async () => {
        const k = fresh();
        await redis.set(k.permits, '5');
        expect(await cancel(k, 'late', 2)).toBe(0);
        expect(await acquire(k, 'late', 2)).toEqual([-1]);
        expect(await redis.get(k.permits)).toBe('5');
      });

      it('reports WRONGTYPE as an error reply and leaves the key alone', async () => {
        const k = fresh();
        await redis.hset(k.permits, 'owner', 'x');
        await expect(acquire(k, 'a', 1)).rejects.toThrow(/WRONGTYPE/);
      });
    });

    describe('cancel', () => {
      it("gives a granted acquire's permits back once, announces the available count, and leaves a tombstone", async () => {
        const k = fresh();
        const listener = await listen(k.channel);
        await redis.set(k.permits, '3');
        await acquire(k, 'a', 2);
        expect(await cancel(k, 'a', 2)).toBe(1);
        expect(await redis.get(k.permits)).toBe('3');
        expect(await redis.get(k.kind)).toBe('semaphore');
        expect(await cancel(k, 'a', 2)).toBe(0);
        expect(await redis.get(k.permits)).toBe('3');
        expect(await acquire(k, 'a', 2)).toEqual([-1]);
        await listener.flush();
        expect(listener.messages).toEqual(['2:3']);
      });
    });

    describe('release', () => {
      it('adds the permits (creating the key, with no kind marker: a release stays one write), announces the available count, and counts a replay once', async () => {
        const k = fresh();
        const listener = await listen(k.channel);
        expect(await release(k, 'r', 2)).toEqual([2, 1]);
        expect(await redis.exists(k.kind)).toBe(0);
        expect(await release(k, 'r', 2)).toEqual([2, 0]);
        expect(await redis.get(k.permits)).toBe('2');
        expect(await release(k, 'r2', 1)).toEqual([3, 1]);
        await listener.flush();
        expect(listener.messages).toEqual(['2:2', '1:3']);
      });

      it('announces nothing while the count stays at or below zero', async () => {
        const k = fresh();
        const listener = await listen(k.channel);
        await redis.set(k.permits, '-3');
        expect(await release(k, 'r', 2)).toEqual([-1, 0]);
        await listener.flush();
        expect(listener.messages).toEqual([]);
      });
    });

    describe('trySetPermits', () => {
      it('sets only an unset semaphore, marks its kind and announces it; a replay answers its first outcome', async () => {
        const k = fresh();
        const listener = await listen(k.channel);
        expect(await trySet(k, 's1', 4)).toBe(1);
        expect(await trySet(k, 's1', 4)).toBe(1);
        expect(await trySet(k, 's2', 9)).toBe(0);
        expect(await redis.get(k.permits)).toBe('4');
        expect(await redis.get(k.kind)).toBe('semaphore');
        await listener.flush();
        expect(listener.messages).toEqual(['4:4']);
      });

      it('counts a semaphore drained to zero as set', async () => {
        const k = fresh();
        await redis.set(k.permits, '0');
        expect(await trySet(k, 's', 4)).toBe(0);
      });
    });

    describe('addPermits', () => {
      it('adds and removes permits (below zero too), a replay counting once, and announces only additions', async () => {
        const k = fresh();
        const listener = await listen(k.channel);
        expect(await add(k, 'a1', 3)).toBe(3);
        expect(await redis.get(k.kind)).toBe('semaphore');
        expect(await add(k, 'a1', 3)).toBe(3);
        expect(await add(k, 'a2', -5)).toBe(-2);
        expect(await add(k, 'a2', -5)).toBe(-2);
        expect(await redis.get(k.permits)).toBe('-2');
        expect(await add(k, 'a3', 1)).toBe(-1);
        expect(await add(k, 'a4', 2)).toBe(1);
        await listener.flush();
        expect(listener.messages).toEqual(['3:3', '2:1']);
      });
    });

    describe('drainPermits', () => {
      it('takes every available permit, a replay answering the same count', async () => {
        const k = fresh();
        await redis.set(k.permits, '7');
        expect(await drain(k, 'd')).toBe(7);
        expect(await drain(k, 'd')).toBe(7);
        expect(await redis.get(k.permits)).toBe('0');
        expect(await drain(k, 'd2')).toBe(0);
      });

      it('resets a negative count to zero taking nothing, and leaves an unset semaphore unset', async () => {
        const k = fresh();
        await redis.set(k.permits, '-4');
        expect(await drain(k, 'd')).toBe(0);
        expect(await redis.get(k.permits)).toBe('0');
        const unset = fresh();
        expect(await drain(unset, 'd')).toBe(0);
        expect(await redis.exists(unset.permits)).toBe(0);
      });
    });
  });

  describe('permit-expirable semaphore', () => {
    const fresh = () => {
      const prefix = uniquePrefix();
      const permits = `${prefix}:{gpu}`;
      return {
        permits,
        leases: `${permits}:leases`,
        holders: `${permits}:holders`,
        kind: `${permits}:kind`,
        fence: fenceKey(prefix, permits),
        channel: `${permits}:permits`,
        marker: (id: string) => `${permits}:permit:${id}`,
        op: (op: string) => `${permits}:op:client:${op}`,
      };
    };
    type Keys = ReturnType<typeof fresh>;
    const three = (k: Keys) => ({ permits: k.permits, leases: k.leases, holders: k.holders, channel: k.channel });
    const acquire = (k: Keys, id: string, leaseMs: number) =>
      run(SCRIPTS.permitSemaphoreAcquire, { ...three(k), fence: k.fence, marker: k.marker(id), id, leaseMs, sharded: '0' }) as Promise<unknown[]>;
    const release = (k: Keys, id: string, token: string, op: string) =>
      run(SCRIPTS.permitSemaphoreRelease, { ...three(k), marker: k.marker(id), id, token, op, replayWindowMs: WINDOW, sharded: '0' }) as Promise<number[]>;
    const cancel = (k: Keys, id: string) => run(SCRIPTS.permitSemaphoreCancel, { ...three(k), marker: k.marker(id), id, replayWindowMs: WINDOW, sharded: '0' });
    const renew = (items: { k: Keys; id: string; token: string; leaseMs: number }[]) =>
      run(SCRIPTS.permitSemaphoreRenew, {
        sharded: '0',
        items: items.map((i) => ({ ...three(i.k), id: i.id, token: i.token, leaseMs: i.leaseMs })),
      }) as Promise<number[]>;
    const trySet = (k: Keys, op: string, n: number) =>
      run(SCRIPTS.permitSemaphoreTrySetPermits, { ...three(k), marker: k.op(op), kind: k.kind, count: n, replayWindowMs: WINDOW, sharded: '0' });
    const add = (k: Keys, op: string, n: number) =>
      run(SCRIPTS.permitSemaphoreAddPermits, { ...three(k), marker: k.op(op), kind: k.kind, delta: n, replayWindowMs: WINDOW, sharded: '0' });
    const available = (k: Keys) => run(SCRIPTS.permitSemaphoreAvailable, { ...three(k), sharded: '0' });
    const serverMs = async () => {
      const [seconds, micros] = await redis.time();
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    };
    /** Makes permit `id`'s lease lapse now, as the server's clock would. */
    const lapse = async (k: Keys, id: string) => void (await redis.zadd(k.leases, 'XX', (await serverMs()) - 1, id));

    describe('acquire', () => {
      it('grants a permit with a token from the slot counter, a lease on the server clock and its holder entry', async () => {
        const k = fresh();
        await redis.set(k.permits, '2');
        const before = await serverMs();
        const [code, token] = await acquire(k, 'p1', 10_000);
        expect(code).toBe(1);
        expect(token).toMatch(/^\d+$/);
        expect(await redis.get(k.fence)).toBe(token);
        expect(await redis.get(k.permits)).toBe('1');
        expect(await redis.hgetall(k.holders)).toEqual({ p1: token });
        const leaseEnd = Number(await redis.zscore(k.leases, 'p1'));
        expect(leaseEnd).toBeGreaterThanOrEqual(before + 10_000);
        expect(leaseEnd).toBeLessThanOrEqual((await serverMs()) + 10_000);
        const [, second] = await acquire(k, 'p2', 10_000);
        expect(BigInt(second as string) > BigInt(token as string)).toBe(true);
      });

      it('answers a replay of the same id with the same token without taking a second permit', async () => {
        const k = fresh();
        await redis.set(k.permits, '2');
        const first = await acquire(k, 'p', 10_000);
        expect(await acquire(k, 'p', 10_000)).toEqual(first);
        expect(await redis.get(k.permits)).toBe('1');
        expect(await redis.zcard(k.leases)).toBe(1);
      });

      it('refuses when none is available with the time until the earliest lease ends, or -1 without leases', async () => {
        const k = fresh();
        expect(await acquire(k, 'x', 10_000)).toEqual([0, -1]);
        await redis.set(k.permits, '2');
        await acquire(k, 'long', 60_000);
        await acquire(k, 'short', 5_000);
        const [code, retryMs] = await acquire(k, 'p', 10_000);
        expect(code).toBe(0);
        expect(retryMs).toBeGreaterThan(4_000);
        expect(retryMs).toBeLessThanOrEqual(5_000);
        expect(await redis.hexists(k.holders, 'p')).toBe(0);
      });

      it('reclaims lapsed permits first: the lapsed holder is gone and its permit is granted again', async () => {
        const k = fresh();
        const listener = await listen(k.channel);
        await redis.set(k.permits, '2');
        await acquire(k, 'crashed1', 10_000);
        await acquire(k, 'crashed2', 10_000);
        await lapse(k, 'crashed1');
        await lapse(k, 'crashed2');
        expect((await acquire(k, 'next', 10_000))[0]).toBe(1);
        expect(await redis.hkeys(k.holders)).toEqual(['next']);
        expect(await redis.zrange(k.leases, '0', '-1')).toEqual(['next']);
        expect(await redis.get(k.permits)).toBe('1');
        await listener.flush();
        // Two came back, one was taken: the one left is announced for other waiters.
        expect(listener.messages).toEqual(['1:1']);
      });

      it('refuses an id that was cancelled before it arrived, and changes nothing', async () => {
        const k = fresh();
        await redis.set(k.permits, '1');
        expect(await cancel(k, 'late')).toBe(0);
        expect(await acquire(k, 'late', 10_000)).toEqual([-1]);
        expect(await redis.get(k.permits)).toBe('1');
      });
    });

    describe('release', () => {
      it('gives the permit back and announces the available count; a replay of the op never counts twice', async () => {
        const k = fresh();
        const listener = await listen(k.channel);
        await redis.set(k.permits, '1');
        const [, token] = await acquire(k, 'p', 10_000);
        expect(await release(k, 'p', token as string, 'c:r1')).toEqual([1, 1]);
        expect(await release(k, 'p', token as string, 'c:r1')).toEqual([1, 0]);
        expect(await redis.get(k.permits)).toBe('1');
        expect(await redis.exists(k.holders, k.leases)).toBe(0);
        // Another op releasing it again is told it is not held.
        expect(await release(k, 'p', token as string, 'c:r2')).toEqual([-1, 0]);
        expect(await redis.get(k.permits)).toBe('1');
        await listener.flush();
        expect(listener.messages).toEqual(['1:1']);
      });

      it('finds a lapsed permit gone (reclaimed first, its permit back once)', async () => {
        const k = fresh();
        await redis.set(k.permits, '1');
        const [, token] = await acquire(k, 'p', 10_000);
        await lapse(k, 'p');
        expect(await release(k, 'p', token as string, 'c:r')).toEqual([-1, 0]);
        expect(await redis.get(k.permits)).toBe('1');
      });

      it('refuses another token and changes nothing; an empty token releases any', async () => {
        const k = fresh();
        await redis.set(k.permits, '1');
        await acquire(k, 'p', 10_000);
        expect(await release(k, 'p', '42', 'c:r')).toEqual([-1, 1]);
        expect(await redis.get(k.permits)).toBe('0');
        expect(await release(k, 'p', '', 'c:r2')).toEqual([1, 0]);
        expect(await redis.get(k.permits)).toBe('1');
      });
    });

    describe('cancel', () => {
      it('undoes a granted id once, announces it, and refuses the id afterwards', async () => {
        const k = fresh();
        const listener = await listen(k.channel);
        await redis.set(k.permits, '1');
        await acquire(k, 'p', 10_000);
        expect(await cancel(k, 'p')).toBe(1);
        expect(await cancel(k, 'p')).toBe(0);
        expect(await redis.get(k.permits)).toBe('1');
        expect(await acquire(k, 'p', 10_000)).toEqual([-1]);
        expect(await redis.get(k.marker('p'))).toBe('cancelled');
        await listener.flush();
        expect(listener.messages).toEqual(['1:1']);
      });
    });

    describe('renew', () => {
      it('renews a batch across semaphores, never shortens a lease, and reports gone and taken permits', async () => {
        const a = fresh();
        const b = fresh();
        await redis.set(a.permits, '3');
        await redis.set(b.permits, '1');
        const [, t1] = (await acquire(a, 'p1', 5_000)) as [number, string];
        const [, t2] = (await acquire(a, 'p2', 5_000)) as [number, string];
        const [, t3] = (await acquire(b, 'p3', 60_000)) as [number, string];
        await lapse(a, 'p2');
        const before = Number(await redis.zscore(b.leases, 'p3'));
        expect(
          await renew([
            { k: a, id: 'p1', token: t1, leaseMs: 30_000 },
            { k: a, id: 'p2', token: t2, leaseMs: 30_000 },
            { k: b, id: 'p3', token: t3, leaseMs: 1_000 },
            { k: a, id: 'p1', token: '1', leaseMs: 30_000 },
          ]),
        ).toEqual([1, 0, 1, -1]);
        expect(Number(await redis.zscore(a.leases, 'p1'))).toBeGreaterThan((await serverMs()) + 25_000);
        expect(Number(await redis.zscore(b.leases, 'p3'))).toBe(before);
        // p2 was reclaimed by the renewal, never revived.
        expect(await redis.zscore(a.leases, 'p2')).toBeNull();
        expect(await redis.get(a.permits)).toBe('2');
      });
    });

    describe('trySetPermits, addPermits, available', () => {
      it('sets only an unset semaphore and marks its kind; a replay answers its first outcome', async () => {
        const k = fresh();
        expect(await trySet(k, 's1', 3)).toBe(1);
        expect(await trySet(k, 's1', 3)).toBe(1);
        expect(await trySet(k, 's2', 3)).toBe(0);
        expect(await redis.get(k.permits)).toBe('3');
        expect(await redis.get(k.kind)).toBe('permitExpirableSemaphore');
      });

      it('adds and removes permits after reclaiming lapsed ones; a replay counts once', async () => {
        const k = fresh();
        await redis.set(k.permits, '1');
        await acquire(k, 'p', 10_000);
        await lapse(k, 'p');
        expect(await add(k, 'a1', 2)).toBe(3);
        expect(await add(k, 'a1', 2)).toBe(3);
        expect(await add(k, 'a2', -4)).toBe(-1);
        expect(await redis.hexists(k.holders, 'p')).toBe(0);
        expect(await redis.get(k.kind)).toBe('permitExpirableSemaphore');
      });

      it('counts lapsed permits as available (reclaiming them), and announces them', async () => {
        const k = fresh();
        const listener = await listen(k.channel);
        await redis.set(k.permits, '1');
        await acquire(k, 'p', 10_000);
        expect(await available(k)).toBe(0);
        await lapse(k, 'p');
        expect(await available(k)).toBe(1);
        expect(await redis.zcard(k.leases)).toBe(0);
        await listener.flush();
        expect(listener.messages).toEqual(['1:1']);
      });
    });
  });

  describe('count-down latch', () => {
    const fresh = () => {
      const count = `${uniquePrefix()}:{batch}`;
      return { count, kind: `${count}:kind`, channel: `${count}:zero`, op: (op: string) => `${count}:op:client:${op}` };
    };
    type Keys = ReturnType<typeof fresh>;
    const trySet = (k: Keys, op: string, n: number) =>
      run(SCRIPTS.latchTrySetCount, { count: k.count, marker: k.op(op), kind: k.kind, initialCount: n, replayWindowMs: WINDOW });
    const countDown = (k: Keys, op: string) =>
      run(SCRIPTS.latchCountDown, { count: k.count, marker: k.op(op), kind: k.kind, replayWindowMs: WINDOW, sharded: '0', channel: k.channel });

    it('trySetCount sets the count (and its kind marker) only when zero or absent; a replay answers its first outcome', async () => {
      const k = fresh();
      expect(await trySet(k, 's1', 2)).toBe(1);
      expect(await trySet(k, 's1', 2)).toBe(1);
      expect(await trySet(k, 's2', 5)).toBe(0);
      expect(await redis.get(k.count)).toBe('2');
      expect(await redis.get(k.kind)).toBe('countDownLatch');
    });

    it('countDown counts down, deletes the key and its kind marker at zero and announces "zero" once; a replay never counts twice', async () => {
      const k = fresh();
      const listener = await listen(k.channel);
      await trySet(k, 's', 2);
      expect(await countDown(k, 'c1')).toBe(1);
      expect(await countDown(k, 'c1')).toBe(1);
      expect(await redis.get(k.count)).toBe('1');
      expect(await countDown(k, 'c2')).toBe(0);
      expect(await redis.exists(k.count, k.kind)).toBe(0);
      expect(await countDown(k, 'c2')).toBe(0);
      expect(await countDown(k, 'c3')).toBe(0);
      expect(await redis.exists(k.count)).toBe(0);
      await listener.flush();
      expect(listener.messages).toEqual(['zero']);
      // At zero the latch can be set again.
      expect(await trySet(k, 's2', 1)).toBe(1);
    });
  });
  describe('fair lock', () => {
    const fresh = () => {
      const prefix = uniquePrefix();
      const lock = `${prefix}:{fair}`;
      return {
        lock,
        fence: fenceKey(prefix, lock),
        cancelled: `${lock}:cancelled`,
        released: `${lock}:released`,
        queue: `${lock}:queue`,
        waiters: `${lock}:waiters`,
        tickets: `${lock}:tickets`,
        wakePrefix: `${lock}:release:`,
        notices: `${prefix}:client:`,
      };
    };
    type Keys = ReturnType<typeof fresh>;
    /** The keys every fair lock script but cancel and release takes as they are (those add released, cancelled). */
    const queueOf = (k: Keys) => ({ lock: k.lock, fence: k.fence, queue: k.queue, waiters: k.waiters, tickets: k.tickets });
    const WAITER_LEASE = 5_000;
    const acquire = (k: Keys, owner: string, op: string, join = '1', waiterLeaseMs = WAITER_LEASE, leaseMs = 30_000, handed = '', once = '0') =>
      run(SCRIPTS.fairQueueAcquire, { ...queueOf(k), cancelled: k.cancelled, owner, leaseMs, op, waiterLeaseMs, join, handed, once }) as Promise<
        [number, ...unknown[]]
      >;
    const release = (k: Keys, owner: string, op: string) =>
      run(SCRIPTS.fairQueueRelease, {
        ...queueOf(k),
        released: k.released,
        owner,
        op,
        all: '0',
        token: '',
        replayWindowMs: WINDOW,
        sharded: '0',
        wakePrefix: k.wakePrefix,
      });
    const cancel = (k: Keys, owner: string, op: string, acquireOp: string) =>
      run(SCRIPTS.fairQueueCancel, {
        ...queueOf(k),
        released: k.released,
        cancelled: k.cancelled,
        owner,
        op,
        acquireOp,
        all: '0',
        replayWindowMs: WINDOW,
        sharded: '0',
        wakePrefix: k.wakePrefix,
      });
    const leave = (k: Keys, owner: string, keptToken = '') =>
      run(SCRIPTS.fairQueueLeaveQueue, { ...queueOf(k), owner, sharded: '0', kept: keptToken, wakePrefix: k.wakePrefix });
    const forceUnlock = (k: Keys) => run(SCRIPTS.fairQueueForceUnlock, { ...queueOf(k), sharded: '0', notices: k.notices, wakePrefix: k.wakePrefix });
    const hold = async (k: Keys) => parseHold(await redis.hgetall(k.lock));
    const holder = async (k: Keys) => {
      const held = await hold(k);
      return held ? [held.owner, String(held.count)] : [null, null];
    };

    /** Every message on the lock's channels, with the channel it came on. */
    async function heads(k: Keys): Promise<{ heard: { channel: string; message: string }[]; flush(): Promise<void> }> {
      const listener = fleet.client(0);
      const heard: { channel: string; message: string }[] = [];
      listener.on('pmessage', (_pattern: string, channel: string, message: string) => heard.push({ channel, message }));
      await listener.psubscribe(`${k.lock}:release*`);
      return { heard, flush: async () => void (await listener.ping()) };
    }

    it("release hands the lock to a head of the releaser's client by its reply (no message, the head's own lease), and a reentry naming that hand-off counts it too", async () => {
      const k = fresh();
      const listener = await heads(k);
      const { heard } = listener;
      await acquire(k, 'cA:t1', 'a1');
      // cA:t2 queues with a 10 s lease, then cB:t1.
      expect((await acquire(k, 'cA:t2', 'a2', '1', WAITER_LEASE, 10_000))[0]).toBe(0);
      expect((await acquire(k, 'cB:t1', 'b1'))[0]).toBe(0);
      const reply = (await release(k, 'cA:t1', 'r1')) as unknown[];
      const held = await hold(k);
      expect(reply).toEqual([1, 0, 0, 'cA:t2', held?.token, 10_000]);
      expect([held?.owner, held?.count]).toEqual(['cA:t2', 0]);
      // Its own lease, not cut to its waiter lease (5 s).
      expect(await redis.pttl(k.lock)).toBeGreaterThan(WAITER_LEASE);
      await listener.flush();
      expect(heard).toEqual([]);
      // A try naming another token counts one (0 -> 1); naming the hand-off, it counts the hand-off too (0 -> 2).
      const other = fresh();
      await acquire(other, 'cA:t1', 'o1');
      await acquire(other, 'cA:t2', 'o2', '1', WAITER_LEASE, 10_000);
      await release(other, 'cA:t1', 'o3');
      expect((await acquire(other, 'cA:t2', 'o4', '1', WAITER_LEASE, 10_000, '999'))[2]).toBe(1);
      expect((await acquire(k, 'cA:t2', 'a3', '1', WAITER_LEASE, 10_000, held?.token))[2]).toBe(2);
      // Replayed, it answers the same and counts once.
      expect((await acquire(k, 'cA:t2', 'a3', '1', WAITER_LEASE, 10_000, held?.token))[2]).toBe(2);
      expect((await hold(k))?.count).toBe(2);
      // A head of another client still hears a message, and its try claims the hold.
      expect(await release(k, 'cA:t2', 'a4')).toEqual([1, 1, 0]);
      expect(await release(k, 'cA:t2', 'a5')).toEqual([1, 0, 1]);
      await listener.flush();
      expect(heard.map(({ channel }) => channel)).toEqual([`${k.wakePrefix}cB`]);
    });

    it('acquire grants a free lock with nobody queued, queues a refused owner once (its ticket the latest try), and grants a free lock to the head only', async () => {
      const k = fresh();
      const [granted, token, count] = await acquire(k, 'cA:t1', 'a1');
      expect([granted, count]).toEqual([1, 1]);
      expect(token).toMatch(/^\d+$/);
      // Refused while held: queued once, however often it tries; its ticket is its latest try.
      expect((await acquire(k, 'cB:t1', 'b1'))[0]).toBe(0);
      expect((await acquire(k, 'cB:t1', 'b2'))[0]).toBe(0);
      expect((await acquire(k, 'cC:t1', 'c1'))[0]).toBe(0);
      expect(await redis.lrange(k.queue, 0, -1)).toEqual(['cB:t1', 'cC:t1']);
      expect(await redis.hgetall(k.tickets)).toEqual({ 'cB:t1': 'b2 30000', 'cC:t1': 'c1 30000' });
      // A tryLock (join '0') is refused without queueing.
      expect((await acquire(k, 'cD:t1', 'd1', '0'))[0]).toBe(0);
      expect(await redis.llen(k.queue)).toBe(2);
      // The lock expires without a release: free, but it is cB's turn. cC is
      // refused with the head's waiter lease as its wait, and ''.
      await redis.del(k.lock);
      const [refused, waitMs, who] = await acquire(k, 'cC:t1', 'c2');
      expect([refused, who]).toEqual([0, '']);
      expect(waitMs).toBeGreaterThan(0);
      expect((await acquire(k, 'cB:t1', 'b3'))[0]).toBe(1);
      expect(await redis.lrange(k.queue, 0, -1)).toEqual(['cC:t1']);
      expect(await redis.hgetall(k.tickets)).toEqual({ 'cC:t1': 'c2 30000' });
      // A replay of the granting op answers the same and counts nothing.
      expect(await acquire(k, 'cB:t1', 'b3')).toEqual([1, expect.any(String), 1]);
      expect((await hold(k))?.count).toBe(1);
    });

    it('acquire drops a waiter whose lease lapsed: the one behind it becomes the head', async () => {
      const k = fresh();
      await acquire(k, 'cA:t1', 'a1');
      expect((await acquire(k, 'cB:t1', 'b1', '1', 50))[0]).toBe(0);
      expect((await acquire(k, 'cC:t1', 'c1'))[0]).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 120));
      await release(k, 'cA:t1', 'a2');
      // cB lapsed: the release handed the lock to cC, and cB's ticket went with its place.
      expect(await holder(k)).toEqual(['cC:t1', '0']);
      expect(await redis.exists(k.queue, k.waiters, k.tickets)).toBe(0);
    });

    it('acquire queues an owner whose place lapsed behind the head again at the back', async () => {
      const k = fresh();
      await acquire(k, 'cA:t1', 'a1');
      await acquire(k, 'cC:t1', 'c1');
      await acquire(k, 'cB:t1', 'b1', '1', 50);
      await acquire(k, 'cD:t1', 'd1');
      await new Promise((resolve) => setTimeout(resolve, 120));
      await release(k, 'cA:t1', 'a2');
      expect(await holder(k)).toEqual(['cC:t1', '0']);
      // cB tries again: its lapsed place is gone, it queues behind cD.
      expect((await acquire(k, 'cB:t1', 'b2'))[0]).toBe(0);
      expect(await redis.lrange(k.queue, 0, -1)).toEqual(['cD:t1', 'cB:t1']);
      expect(await redis.hget(k.tickets, 'cB:t1')).toBe('b2 30000');
    });

    it('release hands the lock to the head (count 0, a fresh token, TTL its lease cut to its waiter lease) and tells its client alone, with the ticket; a claim counts it, a release frees it', async () => {
      const k = fresh();
      const listener = await heads(k);
      const [, tokenA] = await acquire(k, 'cA:t1', 'a1');
      await acquire(k, 'cB:t7', 'b1', '1', 2_000);
      await acquire(k, 'cC:t1', 'c1', '1', WAITER_LEASE, 1_000);
      expect(await release(k, 'cA:t1', 'a2')).toEqual([1, 0, 1]);
      expect(await holder(k)).toEqual(['cB:t7', '0']);
      const handedToken = (await hold(k))?.token;
      expect(BigInt(handedToken as string)).toBeGreaterThan(BigInt(tokenA as string));
      const ttl = await redis.pttl(k.lock);
      expect(ttl).toBeGreaterThan(1_000);
      expect(ttl).toBeLessThanOrEqual(2_000);
      expect(await redis.lrange(k.queue, 0, -1)).toEqual(['cC:t1']);
      // Nobody else gets it meanwhile, the next head included.
      expect(await acquire(k, 'cC:t1', 'c2', '1', WAITER_LEASE, 1_000)).toEqual([0, expect.any(Number), 'cB:t7']);
      // The claim: count 1, the same token, and the owner's own lease; a replay counts nothing.
      expect(await acquire(k, 'cB:t7', 'b2', '1', WAITER_LEASE, 20_000)).toEqual([1, handedToken, 1]);
      expect(await acquire(k, 'cB:t7', 'b2', '1', WAITER_LEASE, 20_000)).toEqual([1, handedToken, 1]);
      expect(await redis.pttl(k.lock)).toBeGreaterThan(10_000);
      // A reentry after the claim counts.
      expect(await acquire(k, 'cB:t7', 'b3')).toEqual([1, handedToken, 2]);
      await release(k, 'cB:t7', 'b4');
      await release(k, 'cB:t7', 'b5');
      // cC asked for a 1 s lease: its hand-off lives that long, not its waiter lease.
      expect(await holder(k)).toEqual(['cC:t1', '0']);
      expect(await redis.pttl(k.lock)).toBeLessThanOrEqual(1_000);
      // A hand-off never counted is one hold: one release frees it.
      expect(await release(k, 'cC:t1', 'c4')).toEqual([1, 0, 0]);
      expect(await redis.exists(k.lock)).toBe(0);
      await listener.flush();
      const token = (message: string) => message.split(' ')[1];
      expect(listener.heard.map((heard) => heard.channel)).toEqual([`${k.lock}:release:cB`, `${k.lock}:release:cC`]);
      expect(listener.heard[0]?.message).toBe(`cB:t7 ${handedToken} b1`);
      expect(listener.heard[1]?.message).toMatch(/^cC:t1 \d+ c2$/);
      expect(token(listener.heard[0]?.message ?? '')).toBe(handedToken);
    });

    it('release hands a lock to a head whose process died no longer than its waiter lease: then the next head takes it', async () => {
      const k = fresh();
      await acquire(k, 'cA:t1', 'a1');
      await acquire(k, 'cB:t1', 'b1', '1', 150);
      await acquire(k, 'cC:t1', 'c1');
      await release(k, 'cA:t1', 'a2');
      expect(await holder(k)).toEqual(['cB:t1', '0']);
      expect(await redis.pttl(k.lock)).toBeLessThanOrEqual(150);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await redis.exists(k.lock)).toBe(0);
      expect(await acquire(k, 'cC:t1', 'c2')).toEqual([1, expect.any(String), 1]);
    });

    it('cancel undoes a grant and hands the lock to the head as a release does; its tombstone refuses the acquire arriving late', async () => {
      const k = fresh();
      const listener = await heads(k);
      await acquire(k, 'cA:t1', 'a1');
      await acquire(k, 'cB:t1', 'b1');
      expect(await cancel(k, 'cA:t1', 'x1', 'a1')).toBe(1);
      expect(await holder(k)).toEqual(['cB:t1', '0']);
      // An acquire cancelled before it arrived: refused when it comes, nothing queued for it.
      expect(await cancel(k, 'cD:t1', 'x2', 'd1')).toBe(0);
      expect(await acquire(k, 'cD:t1', 'd1')).toEqual([-1]);
      // A reentry cancelled before it arrived is refused too, counting nothing (as the lock's acquire).
      expect(await cancel(k, 'cB:t1', 'x4', 'b9')).toBe(0);
      expect(await acquire(k, 'cB:t1', 'b9')).toEqual([-1]);
      expect(await holder(k)).toEqual(['cB:t1', '0']);
      // A claim cancelled after it ran is undone too, and the lock goes on.
      await acquire(k, 'cE:t1', 'e1');
      expect(await acquire(k, 'cB:t1', 'b2')).toEqual([1, expect.any(String), 1]);
      expect(await cancel(k, 'cB:t1', 'x3', 'b2')).toBe(1);
      expect(await holder(k)).toEqual(['cE:t1', '0']);
      await listener.flush();
      expect(listener.heard.map((m) => m.channel)).toEqual([`${k.lock}:release:cB`, `${k.lock}:release:cE`]);
    });

    it('acquire counts a claim ("claim/<token>") only on the hold handed to that owner with that token: else it changes nothing', async () => {
      const k = fresh();
      // Free lock, nobody queued: a claim takes nothing and does not queue.
      expect(await acquire(k, 'cB:t1', 'claim/123')).toEqual([0, -2, '']);
      expect(await redis.exists(k.lock, k.queue, k.waiters, k.tickets)).toBe(0);
      await acquire(k, 'cA:t1', 'a1');
      await acquire(k, 'cB:t1', 'b1');
      await release(k, 'cA:t1', 'a2');
      const handed = (await hold(k))?.token as string;
      // Another token (an earlier hand-off), or another owner: refused, nothing counted.
      expect((await acquire(k, 'cB:t1', 'claim/1'))[0]).toBe(0);
      expect((await acquire(k, 'cC:t1', `claim/${handed}`))[0]).toBe(0);
      expect(await holder(k)).toEqual(['cB:t1', '0']);
      expect(await redis.exists(k.queue)).toBe(0);
      // The right one counts it once, a replay too.
      expect(await acquire(k, 'cB:t1', `claim/${handed}`)).toEqual([1, handed, 1]);
      expect(await acquire(k, 'cB:t1', `claim/${handed}`)).toEqual([1, handed, 1]);
    });

    it('release and acquire drop a queue entry without a waiter lease (the keys diverged): never handed the lock, never in the way', async () => {
      const k = fresh();
      await acquire(k, 'cA:t1', 'a1');
      await acquire(k, 'cB:t1', 'b1');
      await acquire(k, 'cC:t1', 'c1');
      await redis.zrem(k.waiters, 'cB:t1');
      expect(await release(k, 'cA:t1', 'a2')).toEqual([1, 0, 0]);
      expect(await holder(k)).toEqual(['cC:t1', '0']);
      expect(await redis.exists(k.queue)).toBe(0);
      // A free lock whose queue starts with such an entry: the next try takes it.
      const j = fresh();
      await acquire(j, 'cA:t1', 'a1');
      await acquire(j, 'cB:t1', 'b1');
      await redis.del(j.lock, j.waiters);
      expect(await acquire(j, 'cD:t1', 'd1')).toEqual([1, expect.any(String), 1]);
      expect(await redis.exists(j.queue)).toBe(0);
    });

    it("forceUnlock tells the holder on its client's notice channel, naming owner, token and key", async () => {
      const k = fresh();
      const notices = await listen(`${k.notices}cA`);
      const [, token] = await acquire(k, 'cA:t1', 'a1');
      await acquire(k, 'cB:t1', 'b1');
      expect(await forceUnlock(k)).toBe(1);
      await notices.flush();
      expect(notices.messages).toEqual([`forced cA:t1 ${String(token)} ${k.lock}`]);
    });

    it('leaveQueue gives back a hand-off not yet claimed (to the next head), and by the head of a free lock hands it on; forceUnlock hands a held lock to the head', async () => {
      const k = fresh();
      const listener = await heads(k);
      expect(await forceUnlock(k)).toBe(0);
      await acquire(k, 'cA:t1', 'a1');
      await acquire(k, 'cB:t1', 'b1');
      await acquire(k, 'cC:t1', 'c1');
      await acquire(k, 'cD:t1', 'd1');
      expect(await forceUnlock(k)).toBe(1);
      expect(await holder(k)).toEqual(['cB:t1', '0']);
      expect(await redis.lrange(k.queue, 0, -1)).toEqual(['cC:t1', 'cD:t1']);
      // cB gave up as the lock came to it: it goes to cC; a second leave finds nothing.
      expect(await leave(k, 'cB:t1')).toBe(1);
      expect(await leave(k, 'cB:t1')).toBe(0);
      expect(await holder(k)).toEqual(['cC:t1', '0']);
      // A hand-off a branch of the task counts on (its token named) stays.
      const handed = (await hold(k))?.token as string;
      expect(await leave(k, 'cC:t1', handed)).toBe(0);
      expect(await holder(k)).toEqual(['cC:t1', '0']);
      // A claimed hold is not the queue's: leaving leaves it held.
      await acquire(k, 'cC:t1', 'c2');
      expect(await leave(k, 'cC:t1')).toBe(0);
      expect(await holder(k)).toEqual(['cC:t1', '1']);
      // The lock expires; its head gives up: the next one is handed the lock.
      await acquire(k, 'cE:t1', 'e1');
      await redis.del(k.lock);
      expect(await leave(k, 'cD:t1')).toBe(1);
      expect(await holder(k)).toEqual(['cE:t1', '0']);
      await listener.flush();
      expect(listener.heard.map((m) => m.message.split(' ')[0])).toEqual(['cB:t1', 'cC:t1', 'cE:t1']);
    });
  });
});
