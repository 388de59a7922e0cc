import { RedisFleet, OverlapProbe, evalScript } from '@org/rlock-testing';
import { LockAcquireTimeoutError, type NonReentrantFairLockInfo, type RLock, type RLockClient } from '@org/rlock-core';
import { SCRIPTS, fenceKey } from '@org/rlock-core/internal';
import { fixture, runChild, startChild, type Child } from './child-processes.js';
import { ClientPool, eventually, holdAt, uniquePrefix } from './support.js';

/** A process whose tasks wait for the lock when told ("go <label>"), each line timed as it arrives. */
function waiterProcess(env: Record<string, string>): { child: Child; lines: { text: string; at: number }[] } {
  const child = startChild(fixture('fair-waiter.mjs'), { ...env, KIND: 'nonReentrantFair' });
  const lines: { text: string; at: number }[] = [];
  let buffer = '';
  child.process.stdout?.on('data', (chunk: Buffer) => {
    const parts = (buffer + chunk.toString()).split('\n');
    buffer = parts.pop() ?? '';
    for (const text of parts) lines.push({ text, at: performance.now() });
  });
  return { child, lines };
}

describe('NonReentrantFairLock', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();
  let client: RLockClient;

  beforeAll(async () => void (fleet = await RedisFleet.start({ size: 1 })));
  beforeEach(() => void (client = pool.make(fleet.url(0))));
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  const lease = { leaseMs: 10_000 };
  /** Another client of the same keys. */
  const sharing = (): RLockClient => pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
  const inTask = (name: string, fn: (lock: RLock<string>) => Promise<void>): Promise<void> => client.task(() => fn(client.getNonReentrantFairLock(name)));
  const describeAs = async (name: string) => (await client.inspect(name, { kind: 'nonReentrantFairLock' })) as NonReentrantFairLockInfo | undefined;
  const queueLength = (name: string) => fleet.client(0).llen(`${client.options.keyPrefix}:{${name}}:queue`);

  describe('a task asking again', () => {
    it('is refused by tryLock and times out in lock(), counting nothing and leaving no place in the queue', () =>
      inTask('try', async (lock) => {
        expect(await lock.tryLock(lease)).toBe(true);
        expect(await lock.tryLock(lease)).toBe(false);
        expect(await lock.tryLock({ ...lease, waitMs: 50 })).toBe(false);
        await expect(lock.lock({ ...lease, waitMs: 200 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);
        expect(await lock.getHoldCount()).toBe(1);
        // Each call that gave up left the queue (its owner's hold stays).
        expect(await eventually(async () => (await queueLength('try')) === 0, 5_000)).toBe(true);
        await lock.unlock();
        expect(await lock.isLocked()).toBe(false);
      }));

    it('waits in arrival order: behind a task of another client that queued first, then gets a hold of its own', async () => {
      const other = sharing();
      const served: string[] = [];
      await inTask('turns', async (lock) => {
        await lock.lock(lease);
        const first = other.task(() => other.getNonReentrantFairLock('turns').withLock(() => void served.push('other'), { ...lease, waitMs: 10_000 }));
        expect(await eventually(async () => (await queueLength('turns')) === 1, 5_000)).toBe(true);
        const again = lock.lock({ ...lease, waitMs: 10_000 }).then(() => void served.push('again'));
        expect(await eventually(async () => (await queueLength('turns')) === 2, 5_000)).toBe(true);
        expect(await lock.getHoldCount()).toBe(1);
        await lock.unlock();
        await Promise.all([first, again]);
        expect(served).toEqual(['other', 'again']);
        // A new hold, not a count of two: one unlock frees it.
        expect(await lock.getHoldCount()).toBe(1);
        await lock.unlock();
        expect(await lock.isLocked()).toBe(false);
      });
    });

    it('grants one of two branches of a task that try at once, in every round (Redis decides)', () =>
      inTask('branches', async (lock) => {
        for (let round = 0; round < 20; round++) {
          const outcomes = await Promise.all([lock.tryLock(lease), lock.tryLock(lease)]);
          expect(outcomes.filter(Boolean)).toHaveLength(1);
          expect(await lock.getHoldCount()).toBe(1);
          await lock.unlock();
          expect(await lock.isLocked()).toBe(false);
        }
      }));

    it('lets child tasks, each an owner of its own, hold it one at a time', async () => {
      const probe = new OverlapProbe();
      const lock = client.getNonReentrantFairLock('children');
      await client.task(() =>
        Promise.all(
          [1, 2, 3].map(() =>
            client.task(async () => {
              for (let round = 0; round < 10; round++) {
                await lock.lock({ ...lease, waitMs: 10_000 });
                await probe.section(() => new Promise((resolve) => setImmediate(resolve)));
                await lock.unlock();
              }
            }),
          ),
        ),
      );
      expect(probe.entries).toBe(30);
      expect(probe.maxInside).toBe(1);
      expect(await lock.isLocked()).toBe(false);
    });
  });

  describe('across processes', () => {
    it('serves waiters of 3 processes in arrival order', async () => {
      const prefix = client.options.keyPrefix;
      const held = await client.getNonReentrantFairLock('fifo').acquire({ leaseMs: 30_000 });
      const waiters = [0, 1, 2].map(() => waiterProcess({ REDIS_URL: fleet.url(0), PREFIX: prefix, NAME: 'fifo', HOLD_MS: '5' }));
      try {
        const labels = Array.from({ length: 9 }, (_, i) => `w${i}`);
        for (const [i, label] of labels.entries()) {
          waiters[i % 3]?.child.process.stdin?.write(`go ${label}\n`);
          // Arrival order is the order of joining the queue in Redis.
          expect(await eventually(async () => (await queueLength('fifo')) === i + 1, 10_000)).toBe(true);
        }
        await held.unlock();
        for (const { child } of waiters) child.process.stdin?.end();
        expect(await Promise.all(waiters.map(({ child }) => child.exited))).toEqual([0, 0, 0]);
        const acquired = waiters
          .flatMap(({ lines }) => lines)
          .filter((line) => line.text.startsWith('acquired'))
          .sort((a, b) => a.at - b.at)
          .map((line) => line.text.split(' ')[1]);
        expect(acquired).toEqual(labels);
      } finally {
        for (const { child } of waiters) child.process.kill('SIGKILL');
      }
    });

    it('never lets holders of 4 processes overlap', async () => {
      const prefix = uniquePrefix();
      const env = { REDIS_URL: fleet.url(0), PREFIX: prefix, TASKS: '4', ROUNDS: '25', KIND: 'nonReentrantFair' };
      await Promise.all([1, 2, 3, 4].map((worker) => runChild(fixture('counter-worker.mjs'), { ...env, WORKER: String(worker) })));
      const redis = fleet.client(0);
      expect(Number(await redis.get(`${prefix}:data:counter`))).toBe(4 * 4 * 25);
      expect(Number((await redis.get(`${prefix}:data:overlaps`)) ?? 0)).toBe(0);
    });
  });

  it('gives every hold, a hand-off claimed by a queued waiter included, a larger fencing token than the one before', async () => {
    const other = sharing();
    const tokens: bigint[] = [];
    for (let round = 0; round < 10; round++) {
      const [holder, waiter] = round % 2 === 0 ? [client, other] : [other, client];
      const held = await holder.getNonReentrantFairLock('fenced').acquire(lease);
      const waiting = waiter.getNonReentrantFairLock('fenced').acquire({ ...lease, waitMs: 10_000 });
      expect(await eventually(async () => (await queueLength('fenced')) === 1, 5_000)).toBe(true);
      await held.unlock();
      const handedOver = await waiting;
      tokens.push(BigInt(held.token), BigInt(handedOver.token));
      await handedOver.unlock();
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1] as bigint);
  });

  describe('inspect', () => {
    it('reports the kind nonReentrantFairLock while waiters queue, and when told the kind', async () => {
      const held = await client.getNonReentrantFairLock('order:9').acquire(lease);
      const other = sharing();
      const waiting = other.getNonReentrantFairLock('order:9').acquire({ ...lease, waitMs: 10_000 });
      expect(await eventually(async () => (await queueLength('order:9')) === 1, 5_000)).toBe(true);
      expect(await client.inspect('order:9')).toMatchObject({ kind: 'nonReentrantFairLock', holders: [{ count: 1, token: held.token }], waiterCount: 1 });
      const pages: unknown[] = [];
      for await (const page of client.list({ match: 'order:*' })) pages.push(...page);
      expect(pages).toEqual([expect.objectContaining({ name: 'order:9', kind: 'nonReentrantFairLock' })]);
      await held.unlock();
      const next = await waiting;
      // Held with nobody queued, its keys are the non-reentrant lock's: the kind asked settles it.
      expect(await client.inspect('order:9')).toMatchObject({ kind: 'nonReentrantLock' });
      expect(await describeAs('order:9')).toMatchObject({ kind: 'nonReentrantFairLock', holders: [{ token: next.token }], waiterCount: 0 });
      await next.unlock();
    });
  });

  describe("fair-queue/acquire.lua's once flag", () => {
    const keysOf = (prefix: string) => {
      const lock = `${prefix}:{job}`;
      return {
        lock,
        fence: fenceKey(prefix, lock),
        cancelled: `${lock}:cancelled`,
        queue: `${lock}:queue`,
        waiters: `${lock}:waiters`,
        tickets: `${lock}:tickets`,
      };
    };
    const acquire = (keys: ReturnType<typeof keysOf>, owner: string, op: string, once: string) =>
      evalScript(fleet.client(0), SCRIPTS.fairQueueAcquire, {
        ...keys,
        owner,
        leaseMs: 10_000,
        op,
        waiterLeaseMs: 10_000,
        join: '1',
        handed: '',
        once,
      }) as Promise<unknown[]>;
    const release = (keys: ReturnType<typeof keysOf>, owner: string, op: string) =>
      evalScript(fleet.client(0), SCRIPTS.fairQueueRelease, {
        ...keys,
        released: `${keys.lock}:released`,
        wakePrefix: `${keys.lock}:release:`,
        owner,
        op,
        all: '0',
        token: '',
        replayWindowMs: 10_000,
        sharded: '0',
      });

    it("marks the hold, queues the owner's second op, answers a replay as granted, and counts a hand-off's claim once", async () => {
      const redis = fleet.client(0);
      const keys = keysOf(uniquePrefix());
      const first = await acquire(keys, 'c:t1', 'op1', '1');
      expect(first).toEqual([1, expect.any(String), 1]);
      expect(await redis.hgetall(keys.lock)).toEqual({ 'c:t1': '1', t: first[1], o: 'op1', n: '1' });
      const [code, , holder] = await acquire(keys, 'c:t1', 'op2', '1');
      expect([code, holder]).toEqual([0, 'c:t1']);
      expect(await redis.lrange(keys.queue, 0, -1)).toEqual(['c:t1']);
      expect(await acquire(keys, 'c:t1', 'op1', '1')).toEqual(first);
      // The release hands the lock to the queue's head, the same owner, as a hold of count 0 that its next try claims.
      await release(keys, 'c:t1', 'rel1');
      expect(await holdAt(redis, keys.lock)).toMatchObject({ owner: 'c:t1', count: 0, once: false });
      const claimed = await acquire(keys, 'c:t1', 'op3', '1');
      expect(claimed).toEqual([1, expect.any(String), 1]);
      expect(BigInt(claimed[1] as string)).toBeGreaterThan(BigInt(first[1] as string));
      expect(await holdAt(redis, keys.lock)).toMatchObject({ owner: 'c:t1', count: 1, once: true });
      expect((await acquire(keys, 'c:t1', 'op4', '1'))[0]).toBe(0);
    });

    it("leaves the fair lock as it was: once 0 counts the owner's second op and marks nothing", async () => {
      const redis = fleet.client(0);
      const keys = keysOf(uniquePrefix());
      await acquire(keys, 'c:t1', 'op1', '0');
      expect(await acquire(keys, 'c:t1', 'op2', '0')).toEqual([1, expect.any(String), 2]);
      expect(await redis.hexists(keys.lock, 'n')).toBe(0);
      expect(await redis.llen(keys.queue)).toBe(0);
    });
  });
});
