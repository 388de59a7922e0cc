import { ClientClosedError, IllegalMonitorStateError, LockAcquireTimeoutError, LockLostError, type LockLostEvent } from '@org/rlock-core';
import { QuorumError } from '@org/rlock-redlock';
import { RedisFleet, commandCalls, takeHoldLeakWarnings } from '@org/rlock-testing';
import { RedlockPool, aborted, eventually, firstMajority, lockOnMasters, plantHold } from './support.js';

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
      // A client that never heard from 3 and 4 cannot tell this young fleet from
      // restarted masters and would sit out the quarantine: off here, as this is about masters down.
      const redlock = pool.make(fleet, { watchdogTimeoutMs: 3_000, restartQuarantineMs: 0 });
      const lock = redlock.getLock('degraded');
      const key = `${redlock.options.keyPrefix}:{degraded}`;
      await redlock.task(async () => {
        await lock.lock();
        await lock.lock({ leaseMs: 1_000 });
        expect(await lock.isHeldByCurrentTask()).toBe(true);
        expect(await lock.getHoldCount()).toBe(2);
        // The masters count nothing: each holds one key of the task's first acquire.
        const holds = await lockOnMasters(fleet as RedisFleet, key, [0, 1, 2]);
        expect(holds.map((hold) => hold.op !== undefined && hold.owner === holds[0]?.owner)).toEqual([true, true, true]);
        await lock.unlock();
        await lock.unlock();
      });
      expect(await lockOnMasters(fleet, key, [0, 1, 2])).toEqual([{}, {}, {}]);
      await redlock.task(async () => expect(await lock.tryLock({ leaseMs: 1_000 })).toBe(true));
      expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['degraded']);
    });

    it('rejects tryLock with a QuorumError at once, whatever its waitMs, with 3 of 5 down, leaving no key on the live masters', async () => {
      fleet = await RedisFleet.start({ size: 5 });
      const redlock = pool.make(fleet, { restartQuarantineMs: 0 }); // as above: masters down, not restarted
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

    it("gives each waiting call its own commandTimeoutMs of rounds without a majority, whatever an earlier call's were", async () => {
      fleet = await RedisFleet.start({ size: 5 });
      const started = fleet;
      const redlock = pool.make(fleet, { restartQuarantineMs: 0, commandTimeoutMs: 600 }); // as above: masters down, not restarted
      for (const index of [2, 3, 4]) await fleet.kill(index);
      const lock = redlock.getLock('outage');
      const admin = started.client(0);
      await redlock.task(async () => {
        // Two calls without options: neither inherits the other's rounds (nor the time since its first failed one).
        await expect(lock.lock()).rejects.toBeInstanceOf(QuorumError);
        await admin.config('RESETSTAT');
        await expect(lock.lock()).rejects.toBeInstanceOf(QuorumError);
      });
      // An acquire and its undo per round on a live master: several rounds, not one that gives up at once.
      expect(await commandCalls(admin, 'evalsha')).toBeGreaterThanOrEqual(6);
      admin.disconnect();
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

  describe('unlock without a clear answer', () => {
    it('gives the hold up when fewer than a majority confirmed the release, and finishes the release in the background', async () => {
      fleet = await RedisFleet.start({ size: 3 });
      const first = pool.make(fleet, { watchdogTimeoutMs: 3_000 }); // commandTimeoutMs 1 000
      const second = pool.make(fleet, { keyPrefix: first.options.keyPrefix });
      const lost: LockLostEvent[] = [];
      first.on('lockLost', (event) => lost.push(event));
      const lock = first.getLock('undecided');
      const key = `${first.options.keyPrefix}:{undecided}`;
      for (const client of [first, second]) {
        // Connections up and scripts loaded before any master freezes.
        await client.task(async () => {
          await client.getLock('warm-up').lock({ leaseMs: 1_000 });
          await client.getLock('warm-up').unlock();
        });
      }
      await first.task(async () => {
        // Another owner's key on master 2: the hold is on masters 0 and 1 only.
        const admin = (fleet as RedisFleet).client(2);
        await plantHold(admin, key, 'other:1', 60_000);
        const handle = await lock.acquire({ leaseMs: 20_000 });
        await (fleet as RedisFleet).pause(1);
        // Released on master 0; master 1 does not answer.
        const error = await handle.unlock().catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(QuorumError);
        // At most master 1 may still have it: no majority, so the hold is lost.
        const reason = await aborted(handle.signal, 0);
        expect(reason).toBeInstanceOf(LockLostError);
        expect((reason as LockLostError).reason).toBe('unreachable');
        expect(lost.map((event) => event.reason)).toEqual(['unreachable']);
        await admin.del(key);
        admin.disconnect();
        // Another client takes masters 0 and 2 ...
        expect(await second.task(() => second.getLock('undecided').tryLock({ leaseMs: 5_000 }))).toBe(true);
        // ... and this task's next acquisition goes to the masters instead of counting itself in.
        expect(await lock.tryLock({ leaseMs: 1_000 })).toBe(false);
        expect(await lock.isHeldByCurrentTask()).toBe(false);
        await expect(handle.unlock()).rejects.toBeInstanceOf(IllegalMonitorStateError);
        await expect(lock.unlock()).rejects.toBeInstanceOf(IllegalMonitorStateError);
      });
      // The second client's task ended holding it (by the time this task ended, as it ran inside it).
      expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['undecided']);
      // The release is retried in the background: master 1 drops the key once it runs again.
      await fleet.resume(1);
      expect(await eventually(async () => (await lockOnMasters(fleet as RedisFleet, key, [1]))[0]?.owner === undefined, 5_000)).toBe(true);
    });
  });

  describe('an unlock that finds the hold gone from one of its masters', () => {
    it('rejects with LockLostError when the hold sat on only Q masters, whichever answers first', async () => {
      fleet = await RedisFleet.start({ size: 5 });
      await fleet.kill(3);
      await fleet.kill(4);
      // Masters down, not restarted: no quarantine (see "with masters down").
      const redlock = pool.make(fleet, { watchdogTimeoutMs: 3_000, restartQuarantineMs: 0 }); // commandTimeoutMs 1 000
      const lock = redlock.getLock('gone');
      const key = `${redlock.options.keyPrefix}:{gone}`;
      const admin = fleet.client(2);
      await redlock.task(async () => {
        // On masters 0, 1 and 2: 3 and 4 are down, so never asked.
        await lock.lock({ leaseMs: 20_000 });
        expect((await lockOnMasters(fleet as RedisFleet, key, [0, 1, 2])).every((hold) => hold.owner !== undefined)).toBe(true);
        // Master 2 loses it (as a restart without persistence would) and answers the release last.
        await admin.del(key);
        await admin.call('CLIENT', 'PAUSE', '300', 'ALL');
        // Masters 0 and 1 confirm first; with 3 and 4 free, that is a majority free of the lock, but only two
        // masters had the hold to the end: fewer than Q, so the hold did not stand.
        const error = await lock.unlock().catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(LockLostError);
        expect((error as LockLostError).reason).toBe('expired');
      });
      expect(await lockOnMasters(fleet, key, [0, 1, 2])).toEqual([{}, {}, {}]);
    });
  });

  describe('close', () => {
    it('waits for a round in flight and undoes its grants before the connections quit', async () => {
      fleet = await RedisFleet.start({ size: 3 });
      const redlock = pool.make(fleet, { watchdogTimeoutMs: 3_000, perNodeTimeoutMs: 300 }); // commandTimeoutMs 1 000
      const lock = redlock.getLock('closing-round');
      const key = `${redlock.options.keyPrefix}:{closing-round}`;
      await redlock.task(async () => {
        await lock.lock({ leaseMs: 1_000 }); // connections up and scripts loaded
        await lock.unlock();
      });
      await fleet.pause(1);
      await fleet.pause(2);
      const trying = redlock.task(() => lock.tryLock({ leaseMs: 30_000 })).catch((caught: unknown) => caught);
      // Master 0 granted; the round still waits for the frozen masters 1 and 2.
      expect(await eventually(async () => (await lockOnMasters(fleet as RedisFleet, key, [0]))[0]?.owner !== undefined, 250)).toBe(true);
      const started = performance.now();
      const report = await redlock.close();
      expect(performance.now() - started).toBeLessThan(1_000 + 500); // one commandTimeoutMs, with a frozen master
      expect(await trying).toBeInstanceOf(ClientClosedError);
      expect(report).toEqual({ released: [], failed: [] });
      // The master that answered is clean before close resolves. (The frozen
      // ones keep their grants until their TTL: their cancels wait in ioredis
      // behind the unanswered acquires, past close's bound. See the README.)
      expect(await lockOnMasters(fleet, key, [0])).toEqual([{}]);
    });

    it('takes about one commandTimeoutMs in all with a renewal in flight to frozen masters', async () => {
      fleet = await RedisFleet.start({ size: 3 });
      const redlock = pool.make(fleet, { watchdogTimeoutMs: 3_000 }); // renewed every 1 000 ms; commandTimeoutMs 1 000
      let renewals = 0;
      redlock.on('lockRenewed', () => renewals++);
      await redlock.getLock('slow-close').acquire();
      await fleet.pause(1);
      await fleet.pause(2);
      // Past the first renewal's due time: it is out to the frozen masters.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(renewals).toBe(0);
      const started = performance.now();
      const report = await redlock.close();
      expect(performance.now() - started).toBeLessThan(1_000 + 500);
      expect(report).toEqual({ released: [], failed: ['slow-close'] });
    });
  });

  describe('an uncontended round', () => {
    it('asks every master at once when no other round is under way, so a lock and its unlock reach all of them', async () => {
      fleet = await RedisFleet.start({ size: 5 });
      const started = fleet;
      const redlock = pool.make(fleet);
      const lock = redlock.getLock('alone');
      await redlock.task(async () => {
        await lock.lock({ leaseMs: 1_000 }); // connections up and scripts loaded
        await lock.unlock();
      });
      const admins = [0, 1, 2, 3, 4].map((index) => started.client(index));
      await Promise.all(admins.map((admin) => admin.config('RESETSTAT')));
      await redlock.task(async () => {
        await lock.lock({ leaseMs: 10_000 });
        await lock.unlock();
      });
      // The acquire and the release on each of the five (asked first Q only, the unlock would come before the rest).
      expect(await Promise.all(admins.map((admin) => commandCalls(admin, 'evalsha')))).toEqual([2, 2, 2, 2, 2]);
      admins.forEach((admin) => admin.disconnect());
    });

    it('asks the rest of the masters soon after its first majority: a frozen master there costs that, not the per-node timeout', async () => {
      fleet = await RedisFleet.start({ size: 5 });
      const started = fleet;
      const redlock = pool.make(fleet, { commandTimeoutMs: 10_000, perNodeTimeoutMs: 5_000, watchdogTimeoutMs: 30_000 });
      const lock = redlock.getLock('first');
      const key = `${redlock.options.keyPrefix}:{first}`;
      await redlock.task(async () => {
        await lock.lock({ leaseMs: 1_000 }); // connections up and scripts loaded
        await lock.unlock();
      });
      const [frozen] = await firstMajority(fleet, key, 5);
      await fleet.pause(frozen as number);
      // Another round under way (begun first, so it goes alone to every master): this one asks its first Q first.
      const beside = redlock.task(async () => {
        const other = redlock.getLock('beside');
        await other.lock({ leaseMs: 10_000 });
        await other.unlock();
      });
      await redlock.task(async () => {
        const begun = performance.now();
        await lock.lock({ leaseMs: 10_000 });
        // Without the rest asked, the round would wait for the frozen master's per-node timeout (5 s).
        expect(performance.now() - begun).toBeLessThan(2_500);
        // The hold spreads to every master that answers, the four others.
        const others = [0, 1, 2, 3, 4].filter((index) => index !== frozen);
        const heldThere = async () => (await lockOnMasters(started, key, others)).every((hold) => hold.owner !== undefined);
        expect(await eventually(heldThere, 2_000)).toBe(true);
        await lock.unlock();
      });
      await beside;
    });
  });

  describe('an unlock while grants are still on their way', () => {
    it('counts masters whose acquire answered after the lock, so a frozen early granter does not hold the unlock up', async () => {
      fleet = await RedisFleet.start({ size: 5 });
      const redlock = pool.make(fleet, { watchdogTimeoutMs: 3_000 }); // commandTimeoutMs 1 000
      const lock = redlock.getLock('late');
      const key = `${redlock.options.keyPrefix}:{late}`;
      await redlock.task(async () => {
        await lock.lock({ leaseMs: 1_000 }); // connections up and scripts loaded
        await lock.unlock();
      });
      // Two of the masters the round asks first sleep, so it asks the other two before it can win: all five are asked.
      const [sleeper1, sleeper2, granter] = (await firstMajority(fleet, key, 5)) as [number, number, number];
      const others = [0, 1, 2, 3, 4].filter((index) => index !== sleeper1 && index !== sleeper2 && index !== granter);
      await fleet.debugSleep(sleeper1, 0.3);
      await fleet.debugSleep(sleeper2, 0.3);
      await redlock.task(async () => {
        // Granted by the third first master and the other two; the sleepers answer once their sleep is over.
        await lock.lock({ leaseMs: 10_000 });
        await (fleet as RedisFleet).pause(granter);
        // Released by the other two at once and by the sleepers when they wake: a majority without the frozen granter.
        await lock.unlock();
      });
      expect(await lockOnMasters(fleet, key, [sleeper1, sleeper2, ...others])).toEqual([{}, {}, {}, {}]);
    });

    it("releases a master whose acquire was pending by the round's op, and retries that release when it times out", async () => {
      fleet = await RedisFleet.start({ size: 5 });
      const started = fleet;
      const redlock = pool.make(fleet, { watchdogTimeoutMs: 3_000 }); // commandTimeoutMs 1 000
      const lock = redlock.getLock('pending');
      const key = `${redlock.options.keyPrefix}:{pending}`;
      await redlock.task(async () => {
        await lock.lock({ leaseMs: 1_000 }); // connections up and scripts loaded
        await lock.unlock();
      });
      // Two of the masters the round asks first sleep, so it asks the other two before it can win: the sleepers'
      // acquires are pending at the unlock, whatever the machine's load does to the 1 ms timer of the rest.
      const sleepers = (await firstMajority(fleet, key, 5)).slice(0, 2);
      const admins = sleepers.map((index) => started.client(index));
      await Promise.all(admins.map((admin) => admin.config('RESETSTAT')));
      // Asleep past one commandTimeoutMs: the release to them times out before they answer.
      for (const index of sleepers) await fleet.debugSleep(index, 2);
      await redlock.task(async () => {
        await lock.lock({ leaseMs: 10_000 }); // granted by the other three; the sleepers pending
        await lock.unlock(); // released by those three
      });
      // Each sleeper runs the acquire, the release behind it, then the retry sent when that release timed out: named
      // by the round's op like a token (never owner-wide), so it cannot delete a newer hold of the task (release's
      // script tests show a release by token leaves another op's grant).
      const retried = async () => (await Promise.all(admins.map((admin) => commandCalls(admin, 'evalsha')))).every((calls) => calls >= 3);
      expect(await eventually(retried, 5_000)).toBe(true);
      expect(await lockOnMasters(started, key, [0, 1, 2, 3, 4])).toEqual([{}, {}, {}, {}, {}]);
      admins.forEach((admin) => admin.disconnect());
    });
  });

  describe('a connection that blips during a round', () => {
    it('still cancels the grant of a master whose connection dropped after granting', async () => {
      fleet = await RedisFleet.start({ size: 3 });
      const started = fleet;
      // Slow reconnects: the connection to master 0 is still down when the round ends.
      const masters = [0, 1, 2].map((index) => ({ host: '127.0.0.1', port: started.port(index), retryStrategy: () => 1_000 }));
      const redlock = pool.make(fleet, { masters, watchdogTimeoutMs: 3_000, perNodeTimeoutMs: 500 });
      const lock = redlock.getLock('blip');
      const key = `${redlock.options.keyPrefix}:{blip}`;
      await redlock.task(async () => {
        await lock.lock({ leaseMs: 1_000 }); // connections up and scripts loaded
        await lock.unlock();
      });
      // Master 1 refuses (another owner), master 2 is frozen: master 0's grant must be cancelled.
      const other = fleet.client(1);
      await plantHold(other, key, 'other:1', 30_000);
      other.disconnect();
      await fleet.pause(2);
      const trying = redlock.task(() => lock.tryLock({ leaseMs: 30_000 }));
      expect(await eventually(async () => (await lockOnMasters(started, key, [0]))[0]?.owner !== undefined, 400)).toBe(true);
      // The round still waits for master 2: drop the client's connection to master 0 now.
      const admin = fleet.client(0);
      await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      admin.disconnect();
      expect(await trying).toBe(false);
      // The cancel waited in the offline queue and ran on reconnect, instead of being dropped.
      expect(await eventually(async () => (await lockOnMasters(started, key, [0]))[0]?.owner === undefined, 3_000)).toBe(true);
    });
  });
});
