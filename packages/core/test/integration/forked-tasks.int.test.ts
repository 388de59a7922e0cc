import { jest } from '@jest/globals';
import { RedisFleet } from '@org/rlock-testing';
import { currentTask, type RLockClient } from '@org/rlock-core';
import { ClientPool, eventually } from './support.js';

/** Records rlock's process warnings by code (kept off stderr); restored after each test. */
function captureWarnings(): { code: unknown; message: string }[] {
  const warnings: { code: unknown; message: string }[] = [];
  jest.spyOn(process, 'emitWarning').mockImplementation((message: string | Error, options?: unknown) => {
    warnings.push({ code: (options as { code?: string } | undefined)?.code, message: String(message) });
  });
  return warnings;
}

const lease = { leaseMs: 10_000 };

describe('client.task', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();
  let client: RLockClient;

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  beforeEach(() => {
    client = pool.make(fleet.url(0));
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await pool.closeAll();
  });
  afterAll(() => fleet.stop());

  describe('inside a task', () => {
    it('starts a child task with an owner id of its own', async () => {
      const ids = await client.task(async () => {
        const parent = currentTask()?.taskId;
        const children = await Promise.all([client.task(async () => currentTask()?.taskId), client.task(async () => currentTask()?.taskId)]);
        // Back in the parent once its children settled.
        return [parent, ...children, currentTask()?.taskId];
      });
      expect(new Set(ids.slice(0, 3)).size).toBe(3);
      expect(ids[3]).toBe(ids[0]);
    });

    it('lets exactly one of two forked tryLock() branches have the lock, in every round', async () => {
      const lock = client.getLock('forked');
      for (let round = 0; round < 30; round++) {
        let tried = 0;
        let bothTried!: () => void;
        const barrier = new Promise<void>((resolve) => (bothTried = resolve));
        // Each branch releases what it took only once both have tried: neither can win by coming second.
        const branch = () =>
          client.task(async () => {
            const taken = await lock.tryLock(lease);
            if (++tried === 2) bothTried();
            await barrier;
            if (taken) await lock.unlock();
            return taken;
          });
        const won = await client.task(async () => {
          const branches = await Promise.all([branch(), branch()]);
          expect(await lock.isHeldByCurrentTask()).toBe(false);
          return branches;
        });
        expect(won.filter(Boolean)).toHaveLength(1);
        expect(await lock.isLocked()).toBe(false);
      }
    });

    it('makes waiters started inside the holder’s withLock wait until it releases', async () => {
      const lock = client.getFairLock('holder-forks');
      const order: string[] = [];
      await lock
        .withLock(async () => {
          order.push('held');
          const waiters = [1, 2, 3].map((n) =>
            client.task(() =>
              lock.withLock(
                () => {
                  order.push(`waiter ${n}`);
                },
                { leaseMs: 5_000 },
              ),
            ),
          );
          // Each waiter is queued in Redis behind the holder, not let in as the holder's task.
          expect(await eventually(async () => ((await client.inspect('holder-forks')) as { waiterCount?: number }).waiterCount === 3, 5_000)).toBe(true);
          order.push('releasing');
          // The waiters' promises are awaited after the release (withLock returns them unawaited).
          return waiters;
        }, lease)
        .then((waiters) => Promise.all(waiters));
      expect(order.slice(0, 2)).toEqual(['held', 'releasing']);
      expect(order.slice(2).sort()).toEqual(['waiter 1', 'waiter 2', 'waiter 3']);
    });
  });

  describe('branches of one task (a Promise.all)', () => {
    it('share its ownership, and a lock acquired by two of them at once is warned about once (RLOCK_TASK_BRANCHES)', async () => {
      const warnings = captureWarnings();
      const lock = client.getLock('branches');
      const both = await client.task(async () => {
        const taken = await Promise.all([lock.tryLock({ leaseMs: 10_000 }), lock.tryLock({ leaseMs: 10_000 })]);
        expect(await lock.getHoldCount()).toBe(2);
        await lock.unlock();
        await lock.unlock();
        // Again: the warning is told once per client.
        await Promise.all([lock.tryLock({ leaseMs: 10_000 }), lock.tryLock({ leaseMs: 10_000 })]);
        await lock.unlock();
        await lock.unlock();
        return taken;
      });
      expect(both).toEqual([true, true]);
      const branchWarnings = warnings.filter(({ code }) => code === 'RLOCK_TASK_BRANCHES');
      expect(branchWarnings).toHaveLength(1);
      expect(branchWarnings[0]?.message).toContain('"branches"');
      expect(branchWarnings[0]?.message).toContain('client.task(fn)');
    });

    it('is not warned about for nested calls, sequential reacquisitions, forked tasks or a read lock shared by branches', async () => {
      const warnings = captureWarnings();
      const lock = client.getLock('nested');
      const rw = client.getReadWriteLock('shared');
      await client.task(async () => {
        await lock.withLock(async () => {
          await lock.withLock(() => lock.withLock(() => undefined, lease), lease);
        }, lease);
        for (let i = 0; i < 3; i++) {
          await lock.lock({ leaseMs: 10_000 });
          await lock.unlock();
        }
        await Promise.all([client.task(() => lock.withLock(() => undefined, lease)), client.task(() => lock.withLock(() => undefined, lease))]);
        await Promise.all([rw.readLock().withLock(() => undefined, lease), rw.readLock().withLock(() => undefined, lease)]);
      });
      expect(warnings.filter(({ code }) => code === 'RLOCK_TASK_BRANCHES')).toEqual([]);
    });
  });
});
