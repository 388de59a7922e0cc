import { LockLostError, type LockLostEvent } from '@org/rlock-core';
import { RedisFleet } from '@org/rlock-testing';
import { RedlockPool, aborted, eventually, lockOnMasters, plantHold } from './support.js';

const WATCHDOG_MS = 600; // renewed every 200 ms

describe('Redlock', () => {
  describe('watchdog', () => {
    let fleet: RedisFleet;
    const pool = new RedlockPool();

    beforeEach(async () => {
      fleet = await RedisFleet.start({ size: 5 });
    });
    afterEach(async () => {
      await pool.closeAll();
      await fleet.stop();
    });

    /** Deletes the lock's key on the given masters, as an admin or a restart without persistence would. */
    async function deleteOn(key: string, indexes: readonly number[]): Promise<void> {
      await Promise.all(
        indexes.map(async (index) => {
          const redis = fleet.client(index);
          await redis.del(key);
          redis.disconnect();
        }),
      );
    }

    /**
     * Waits until the hold is on all 5 masters: a round that won on its first majority asks the other two about a
     * millisecond later, and a grant that lands after deleteOn would put back what the test took away.
     */
    async function heldEverywhere(key: string): Promise<void> {
      const held = async () => (await lockOnMasters(fleet, key, [0, 1, 2, 3, 4])).every((hold) => hold.owner !== undefined);
      expect(await eventually(held, 2_000)).toBe(true);
    }

    it('keeps the lease on the masters past several watchdogTimeoutMs', async () => {
      const redlock = pool.make(fleet, { watchdogTimeoutMs: WATCHDOG_MS });
      let renewals = 0;
      redlock.on('lockRenewed', ({ count }) => (renewals += count));
      const lock = redlock.getLock('long-job');
      const handle = await lock.acquire();
      const until = performance.now() + 4 * WATCHDOG_MS;
      while (performance.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, WATCHDOG_MS / 2));
        expect(handle.signal.aborted).toBe(false);
        expect(await lock.remainTimeToLive()).toBeGreaterThan(0);
      }
      expect(await handle.run(() => lock.isHeldByCurrentTask())).toBe(true);
      expect(renewals).toBeGreaterThanOrEqual(8);
      await handle.unlock();
      expect(await lock.isLocked()).toBe(false);
    });

    it('keeps the hold when its key is deleted on 2 of 5 masters (a majority still renews it)', async () => {
      const redlock = pool.make(fleet, { watchdogTimeoutMs: WATCHDOG_MS });
      const lock = redlock.getLock('minority-lost');
      const handle = await lock.acquire();
      await heldEverywhere(`${redlock.options.keyPrefix}:{minority-lost}`);
      await deleteOn(`${redlock.options.keyPrefix}:{minority-lost}`, [0, 1]);
      let renewals = 0;
      redlock.on('lockRenewed', ({ count }) => (renewals += count));
      const until = performance.now() + 3 * WATCHDOG_MS;
      while (performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(renewals).toBeGreaterThanOrEqual(4);
      expect(handle.signal.aborted).toBe(false);
      await handle.unlock();
    });

    it('loses the hold when its key is deleted on 3 of 5 masters, and clears the rest', async () => {
      const redlock = pool.make(fleet, { watchdogTimeoutMs: WATCHDOG_MS });
      const lost: LockLostEvent[] = [];
      redlock.on('lockLost', (event) => lost.push(event));
      const lock = redlock.getLock('majority-lost');
      const handle = await lock.acquire();
      await heldEverywhere(`${redlock.options.keyPrefix}:{majority-lost}`);
      await deleteOn(`${redlock.options.keyPrefix}:{majority-lost}`, [0, 1, 2]);
      const reason = await aborted(handle.signal, 2 * WATCHDOG_MS);
      expect(reason).toBeInstanceOf(LockLostError);
      expect((reason as LockLostError).reason).toBe('expired');
      expect(lost).toEqual([expect.objectContaining({ name: 'majority-lost', reason: 'expired', token: undefined })]);
      await expect(handle.unlock()).rejects.toBeInstanceOf(LockLostError);
      // What was left on masters 3 and 4 is swept, so the next owner need not wait for its TTL.
      const other = pool.make(fleet, { keyPrefix: redlock.options.keyPrefix, watchdogTimeoutMs: 30_000 });
      const next = await other.getLock('majority-lost').acquire({ leaseMs: 1_000, waitMs: 1_000 });
      await next.unlock();
    });

    it('reports the hold taken when another owner holds it on a majority', async () => {
      const redlock = pool.make(fleet, { watchdogTimeoutMs: WATCHDOG_MS });
      const lock = redlock.getLock('stolen');
      const handle = await lock.acquire();
      const key = `${redlock.options.keyPrefix}:{stolen}`;
      await heldEverywhere(key);
      await Promise.all(
        [0, 1, 2].map(async (index) => {
          const redis = fleet.client(index);
          await plantHold(redis, key, 'someone:else');
          redis.disconnect();
        }),
      );
      const reason = await aborted(handle.signal, 2 * WATCHDOG_MS);
      expect((reason as LockLostError).reason).toBe('taken');
    });

    it('keeps renewing with 2 of 5 masters killed during the hold', async () => {
      const redlock = pool.make(fleet, { watchdogTimeoutMs: WATCHDOG_MS });
      const lock = redlock.getLock('survivor');
      const handle = await lock.acquire();
      await fleet.kill(0);
      await fleet.kill(1);
      const until = performance.now() + 3 * WATCHDOG_MS;
      while (performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(handle.signal.aborted).toBe(false);
      await handle.unlock();
    });

    it('loses the hold as unreachable when 3 of 5 masters die during it', async () => {
      const redlock = pool.make(fleet, { watchdogTimeoutMs: WATCHDOG_MS });
      const handle = await redlock.getLock('stranded').acquire();
      for (const index of [0, 1, 2]) await fleet.kill(index);
      const reason = await aborted(handle.signal, 2 * WATCHDOG_MS);
      expect((reason as LockLostError).reason).toBe('unreachable');
    });
  });
});
