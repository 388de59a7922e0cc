import { RedisFleet, evalScript, takeHoldLeakWarnings } from '@org/rlock-testing';
import { LockAcquireTimeoutError, LockLostError, type RLock, type RLockClient } from '@org/rlock-core';
import { SCRIPTS, plainLockKeys, type PlainLockKeys } from '@org/rlock-core/internal';
import { ClientPool, holdAt, uniquePrefix } from './support.js';

describe('NonReentrantLock', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();
  let client: RLockClient;

  beforeAll(async () => void (fleet = await RedisFleet.start({ size: 1 })));
  beforeEach(() => void (client = pool.make(fleet.url(0))));
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());
  /** Runs `fn` in a new task, with the non-reentrant lock `name`. */
  const inTask = (name: string, fn: (lock: RLock<string>) => Promise<void>): Promise<void> => client.task(() => fn(client.getNonReentrantLock(name)));

  describe('tryLock', () => {
    it('resolves false when the current task holds it already, and counts nothing', () =>
      inTask('try', async (lock) => {
        expect(await lock.tryLock({ leaseMs: 10_000 })).toBe(true);
        expect(await lock.tryLock({ leaseMs: 10_000 })).toBe(false);
        expect(await lock.tryLock({ leaseMs: 10_000, waitMs: 50 })).toBe(false);
        expect(await lock.getHoldCount()).toBe(1);
        await lock.unlock();
        expect(await lock.isLocked()).toBe(false);
      }));

    it('grants one of two branches of a task that try at once (Redis decides)', () =>
      inTask('branches', async (lock) => {
        const outcomes = await Promise.all([lock.tryLock({ leaseMs: 10_000 }), lock.tryLock({ leaseMs: 10_000 })]);
        expect(outcomes.filter(Boolean)).toHaveLength(1);
        expect(await lock.getHoldCount()).toBe(1);
        await lock.unlock();
        expect(await lock.isLocked()).toBe(false);
      }));
  });

  describe('lock', () => {
    it("makes the holding task's second lock() wait until the first hold is released, across a waitMs", () =>
      inTask('job', async (lock) => {
        await lock.lock({ leaseMs: 10_000 });
        const startedAt = performance.now();
        await expect(lock.lock({ leaseMs: 10_000, waitMs: 200 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);
        expect(performance.now() - startedAt).toBeGreaterThanOrEqual(195);

        let second = 'waiting';
        const waiting = lock.lock({ leaseMs: 10_000, waitMs: 10_000 }).then(() => (second = 'acquired'));
        // Sent behind the second lock()'s first try, on the same connection: that try was refused.
        expect(await lock.getHoldCount()).toBe(1);
        expect(second).toBe('waiting');
        await lock.unlock();
        await waiting;
        // A new hold, not a count of two: one unlock frees it.
        expect(await lock.getHoldCount()).toBe(1);
        await lock.unlock();
        expect(await lock.isLocked()).toBe(false);
      }));

    it('excludes another task as the reentrant lock does', async () => {
      const lock = client.getNonReentrantLock('shared');
      await client.task(() => lock.lock({ leaseMs: 10_000 }));
      expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['shared']);
      await client.task(async () => {
        expect(await lock.tryLock({ leaseMs: 10_000 })).toBe(false);
        await expect(lock.lock({ leaseMs: 10_000, waitMs: 100 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);
        expect(await lock.isHeldByCurrentTask()).toBe(false);
      });
    });

    it('lets the task take it again once its hold was lost', () =>
      inTask('lost', async (lock) => {
        const held = await lock.acquire({ leaseMs: 10_000 });
        expect(await client.getNonReentrantLock('lost').forceUnlock()).toBe(true);
        expect(held.signal.reason).toBeInstanceOf(LockLostError);
        expect(await lock.tryLock({ leaseMs: 10_000 })).toBe(true);
        expect(await lock.isHeldByCurrentTask()).toBe(true);
        await lock.unlock();
      }));
  });

  describe('inspect', () => {
    it('reports the kind nonReentrantLock, in inspect and list', async () => {
      const lock = client.getNonReentrantLock('order:7');
      const held = await lock.acquire({ leaseMs: 10_000 });
      const info = await client.inspect('order:7');
      expect(info).toMatchObject({ kind: 'nonReentrantLock', holderCount: 1, holders: [{ count: 1, token: held.token }] });
      // The layout shows the kind: a hint of another kind does not change it.
      expect(await client.inspect('order:7', { kind: 'lock' })).toMatchObject({ kind: 'nonReentrantLock' });
      const pages: unknown[] = [];
      for await (const page of client.list({ match: 'order:*' })) pages.push(...page);
      expect(pages).toEqual([expect.objectContaining({ name: 'order:7', kind: 'nonReentrantLock' })]);
      await held.unlock();
    });
  });

  describe('acquire with the once flag', () => {
    const acquire = (keys: PlainLockKeys, owner: string, op: string, once: string) =>
      evalScript(fleet.client(0), SCRIPTS.lockAcquire, {
        lock: keys.lock,
        fence: keys.fence,
        cancelled: keys.cancelled,
        clients: keys.clients,
        owner,
        leaseMs: 10_000,
        op,
        once,
        clientsTtlMs: 30_000,
        waits: '1',
      }) as Promise<unknown[]>;

    it('marks the hold, refuses the owner a second op, and answers a replay of its op as granted', async () => {
      const redis = fleet.client(0);
      const keys = plainLockKeys(uniquePrefix(), 'job', 'c');
      const first = await acquire(keys, 'c:t1', 'op1', '1');
      expect(first).toEqual([1, expect.any(String), 1]);
      expect((await holdAt(redis, keys.lock))?.once).toBe(true);
      expect(await redis.hgetall(keys.lock)).toEqual({ 'c:t1': '1', t: first[1], o: 'op1', n: '1' });
      const [code, ttl, holder] = await acquire(keys, 'c:t1', 'op2', '1');
      expect([code, holder]).toEqual([0, 'c:t1']);
      expect(ttl).toBeGreaterThan(9_000);
      expect(await acquire(keys, 'c:t1', 'op1', '1')).toEqual(first);
      expect((await holdAt(redis, keys.lock))?.count).toBe(1);
    });

    it('leaves the reentrant lock as it was: no mark, and once 0 counts', async () => {
      const redis = fleet.client(0);
      const keys = plainLockKeys(uniquePrefix(), 'job', 'c');
      await acquire(keys, 'c:t1', 'op1', '0');
      expect(await acquire(keys, 'c:t1', 'op2', '0')).toEqual([1, expect.any(String), 2]);
      expect((await holdAt(redis, keys.lock))?.once).toBe(false);
      expect(await redis.hexists(keys.lock, 'n')).toBe(0);
    });
  });
});
