import { LockAcquireTimeoutError, QuorumError, type LockHandle } from '@org/rlock-core';
import { RedisFleet } from '@org/rlock-testing';
import { RedlockPool, aborted, eventually, lockOnMasters } from './support.js';

describe('Redlock', () => {
  const pool = new RedlockPool();
  let fleet: RedisFleet | undefined;

  afterEach(async () => {
    // Resume first: a paused server would keep the clients' QUIT waiting.
    if (fleet) for (let i = 0; i < fleet.size; i++) if (fleet.isRunning(i)) await fleet.resume(i);
    await pool.closeAll();
    await fleet?.stop();
    fleet = undefined;
  });

  describe('with masters down', () => {
    it('locks, reenters and unlocks with 2 of 5 masters killed', async () => {
      fleet = await RedisFleet.start({ size: 5 });
      await fleet.kill(3);
      await fleet.kill(4);
      const redlock = pool.make(fleet, { watchdogTimeoutMs: 3_000 });
      const lock = redlock.getLock('degraded');
      const key = `${redlock.options.keyPrefix}:{degraded}`;
      await redlock.task(async () => {
        await lock.lock();
        await lock.lock({ leaseMs: 1_000 });
        expect(await lock.isHeldByCurrentTask()).toBe(true);
        expect(await lock.getHoldCount()).toBe(2);
        expect((await lockOnMasters(fleet as RedisFleet, key, [0, 1, 2])).map((hash) => hash.count)).toEqual(['1', '1', '1']);
        await lock.unlock();
        await lock.unlock();
      });
      expect(await lockOnMasters(fleet, key, [0, 1, 2])).toEqual([{}, {}, {}]);
      await redlock.task(async () => expect(await lock.tryLock({ leaseMs: 1_000 })).toBe(true));
    });

    it('rejects tryLock with a QuorumError at once, whatever its waitMs, with 3 of 5 down, leaving no key on the live masters', async () => {
      fleet = await RedisFleet.start({ size: 5 });
      const redlock = pool.make(fleet);
      for (const index of [2, 3, 4]) await fleet.kill(index);
      const lock = redlock.getLock('no-quorum');
      const key = `${redlock.options.keyPrefix}:{no-quorum}`;
      await redlock.task(async () => {
        const started = performance.now();
        const error = await lock.tryLock({ waitMs: 10_000, leaseMs: 5_000 }).catch((caught: unknown) => caught);
        expect(performance.now() - started).toBeLessThan(2_000);
        expect(error).toBeInstanceOf(QuorumError);
        const quorumError = error as QuorumError;
        expect(quorumError.quorum).toBe(3);
        expect(quorumError.votes).toHaveLength(5);
        expect(quorumError.votes.map((vote) => vote.master)).toEqual((fleet as RedisFleet).urls());
        expect(quorumError.votes.filter((vote) => vote.error !== undefined)).toHaveLength(3);
        expect(quorumError.votes.filter((vote) => vote.granted)).toHaveLength(2);
        expect(await lockOnMasters(fleet as RedisFleet, key, [0, 1])).toEqual([{}, {}]);

        const waitStarted = performance.now();
        const waited = await lock.lock({ waitMs: 300, leaseMs: 5_000 }).catch((caught: unknown) => caught);
        expect(waited instanceof QuorumError || waited instanceof LockAcquireTimeoutError).toBe(true);
        expect(performance.now() - waitStarted).toBeLessThan(2_000);
        expect(await lockOnMasters(fleet as RedisFleet, key, [0, 1])).toEqual([{}, {}]);
      });
    });

    it('costs at most about the per-node timeout per round with a paused (SIGSTOP) master', async () => {
      fleet = await RedisFleet.start({ size: 5 });
      const redlock = pool.make(fleet, { perNodeTimeoutMs: 50, watchdogTimeoutMs: 3_000 });
      const lock = redlock.getLock('paused');
      const key = `${redlock.options.keyPrefix}:{paused}`;
      await redlock.task(async () => {
        await lock.lock({ leaseMs: 1_000 }); // connections up and scripts loaded
        await lock.unlock();
      });
      await fleet.pause(0);
      const durations: number[] = [];
      await redlock.task(async () => {
        for (let i = 0; i < 5; i++) {
          const started = performance.now();
          await lock.lock({ leaseMs: 5_000 });
          await lock.unlock();
          durations.push(performance.now() - started);
        }
      });
      // One round waits for the frozen master up to 50 ms; the release needs only a majority.
      expect(Math.max(...durations)).toBeLessThan(50 + 450);
      await fleet.resume(0);
      // The frozen master ran the queued acquires on waking, each followed by its cancel.
      expect(await eventually(async () => (await lockOnMasters(fleet as RedisFleet, key, [0]))[0]?.owner === undefined, 3_000)).toBe(true);
    });
  });

  describe('safety across a master restart', () => {
    /**
     * Three masters, A B C. The first client holds the lock on A and B only (C
     * is down when it acquires). Returns the first client's handle.
     */
    async function holdOnAB(started: RedisFleet, leaseMs: number) {
      const first = pool.make(started);
      const second = pool.make(started, { keyPrefix: first.options.keyPrefix });
      await started.kill(2);
      const handle = await first.getLock('report').acquire({ leaseMs });
      await started.restart(2);
      return { first, second, handle };
    }

    it('lets a second holder in when a master restarts empty during the hold (no persistence): two holders', async () => {
      fleet = await RedisFleet.start({ size: 3 }); // appendonly no, save '': a restart starts empty
      const { second, handle } = await holdOnAB(fleet, 30_000);
      await fleet.restart(1); // B crashes and comes back without the lock
      const intruder: LockHandle = await second.getLock('report').acquire({ waitMs: 2_000, leaseMs: 30_000 });
      // Redlock's safety argument needs every master to remember its grants:
      // here both believe they hold the lock, on {A, B} and {B, C}.
      expect(handle.signal.aborted).toBe(false);
      expect(intruder.signal.aborted).toBe(false);
      await intruder.unlock();
    });

    it('keeps exclusion when the crashed master restarts only after the longest lease (delayed restart)', async () => {
      fleet = await RedisFleet.start({ size: 3 });
      const leaseMs = 800;
      const { second, handle } = await holdOnAB(fleet, leaseMs);
      await fleet.kill(1);
      // While B is down and the lease runs, the second client gets C only (once
      // its connection to the restarted C is back: until then, no quorum at all).
      const outcome = await second.task(async () => {
        for (const until = performance.now() + 3_000; performance.now() < until; ) {
          try {
            return await second.getLock('report').tryLock({ leaseMs: 30_000 });
          } catch (error) {
            if (!(error instanceof QuorumError)) throw error;
          }
        }
        return 'no answer';
      });
      expect(outcome).toBe(false);
      await aborted(handle.signal, 5_000); // the first client's lease is over
      expect(
        await eventually(async () => (await lockOnMasters(fleet as RedisFleet, `${second.options.keyPrefix}:{report}`, [0]))[0]?.owner === undefined, 2_000),
      ).toBe(true);
      await fleet.restart(1); // only now, empty
      const next = await second.getLock('report').acquire({ waitMs: 2_000, leaseMs: 30_000 }).catch((e) => { console.log(e.votes); throw e; });
      expect(handle.signal.aborted).toBe(true); // never two holders at once
      await next.unlock();
    });
  });
});
