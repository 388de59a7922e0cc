import type { LockHandle } from '@org/rlock-core';
import { QuorumError, type RedlockClient } from '@org/rlock-redlock';
import { FaultProxy, RedisFleet, takeHoldLeakWarnings } from '@org/rlock-testing';
import { RedlockPool, eventually, lockOnMasters, plantHold, uniquePrefix } from './support.js';

const ALL = [0, 1, 2, 3, 4];

describe('Redlock', () => {
  let fleet: RedisFleet;
  const pool = new RedlockPool();

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 5 }); // appendonly no, save '': a restart comes back empty
  });
  afterEach(async () => {
    await pool.closeAll();
    for (let i = 0; i < fleet.size; i++) if (!fleet.isRunning(i)) await fleet.restart(i);
  });
  afterAll(() => fleet.stop());

  describe('across master restarts without persistence (quarantine)', () => {
    /** Uptime of master `i` in whole seconds (INFO server). */
    async function uptimeS(i: number): Promise<number> {
      const redis = fleet.client(i);
      try {
        return Number(/uptime_in_seconds:(\d+)/.exec(await redis.info('server'))?.[1]);
      } finally {
        redis.disconnect();
      }
    }

    /**
     * A client whose connections are up and whose masters' runs are read (one lock taken and released).
     * Masters an earlier round restarted may still sit out their quarantine for a new client: it dates
     * a start by uptime in whole seconds, so up to a second later than it was.
     */
    async function ready(client: RedlockClient): Promise<RedlockClient> {
      const warm = (): Promise<boolean> =>
        client.task(async () => {
          const lock = client.getLock('warm-up');
          const got = await lock.tryLock({ leaseMs: 1_000 }).catch((error: unknown) => {
            if (error instanceof QuorumError) return false;
            throw error;
          });
          if (got) await lock.unlock();
          return got;
        });
      expect(await eventually(warm, 10_000)).toBe(true);
      return client;
    }

    /** Tries `tryLock` in a loop until `until()`; notes when each try was refused, and when each success (released at once) was granted. */
    async function tryUntil(client: RedlockClient, name: string, until: () => boolean): Promise<{ refusedAt: number[]; wonAt: number[] }> {
      const outcome = { refusedAt: [] as number[], wonAt: [] as number[] };
      await client.task(async () => {
        const lock = client.getLock(name);
        while (!until()) {
          const got = await lock.tryLock({ leaseMs: 30_000 }).catch((error: unknown) => {
            if (error instanceof QuorumError) return false;
            throw error;
          });
          if (got) {
            outcome.wonAt.push(performance.now());
            await lock.unlock();
          } else outcome.refusedAt.push(performance.now());
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      });
      return outcome;
    }

    it('works at once on a fresh set of masters started together: every master votes', async () => {
      const redlock = pool.make(fleet); // quarantine: the default watchdogTimeoutMs, 30 s
      const key = `${redlock.options.keyPrefix}:{fresh}`;
      await redlock.task(async () => {
        const lock = redlock.getLock('fresh');
        expect(await lock.tryLock({ leaseMs: 5_000 })).toBe(true);
        expect(await eventually(async () => (await lockOnMasters(fleet, key, ALL)).every((hold) => hold.owner !== undefined), 2_000)).toBe(true);
        await lock.unlock();
      });
    });

    it('never lets a second client in beside a hold granted by exactly {m0, m1, m2} when m2 restarts empty and m3, m4 come back empty', async () => {
      // Clients that start after the restarts date them by uptime: the fleet must be older than 2 s.
      expect(await eventually(async () => (await uptimeS(0)) >= 3, 5_000)).toBe(true);
      for (let round = 0; round < 3; round++) {
        const options = { keyPrefix: uniquePrefix(), watchdogTimeoutMs: 3_000 }; // quarantine 3 s, above the 2.5 s lease
        const first = await ready(pool.make(fleet, options));
        const watcher = await ready(pool.make(fleet, options)); // saw every master's run before the restarts
        await fleet.kill(3);
        await fleet.kill(4);
        const sentBefore = performance.now();
        const hold: LockHandle<undefined> = await first.getLock('report').acquire({ leaseMs: 2_500 });
        const key = `${options.keyPrefix}:{report}`;
        expect((await lockOnMasters(fleet, key, [0, 1, 2])).every((hold) => hold.owner !== undefined)).toBe(true);
        await fleet.kill(2);
        // At once: what the restarts take of the 2.5 s is time the clients cannot try in.
        await Promise.all([2, 3, 4].map((i) => fleet.restart(i)));
        const fresh = pool.make(fleet, options); // started after the restarts
        // Every client tries while the hold lasts (its signal aborts at its deadline): none may get it
        // while the hold's keys are surely on m0 and m1 (they were granted after sentBefore, for 2.5 s).
        // A loaded host runs the abort's timer late: a try granted after that is no second holder.
        const over = (): boolean => hold.signal.aborted;
        const outcomes = await Promise.all([tryUntil(watcher, 'report', over), tryUntil(fresh, 'report', over)]);
        const surelyHeld = (at: number): boolean => at < sentBefore + 2_500;
        expect(outcomes.map((outcome) => outcome.wonAt.filter(surelyHeld).length)).toEqual([0, 0]);
        // Not vacuous: each client was refused while the hold was surely there.
        expect(outcomes.map((outcome) => outcome.refusedAt.some(surelyHeld))).toEqual([true, true]);
        // Once the quarantine is over, the lock works again.
        const tryOnce = (): Promise<boolean> =>
          fresh.task(() =>
            fresh
              .getLock('report')
              .tryLock({ leaseMs: 1_000 })
              .catch(() => false),
          );
        expect(await eventually(tryOnce, 10_000)).toBe(true);
        expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['report']);
        await pool.closeAll();
      }
    });

    it('lets a second holder in when the quarantine is turned off (restartQuarantineMs: 0): what it guards against', async () => {
      const options = { keyPrefix: uniquePrefix(), restartQuarantineMs: 0 };
      const first = await ready(pool.make(fleet, options));
      const second = await ready(pool.make(fleet, options));
      await fleet.kill(3);
      await fleet.kill(4);
      const hold = await first.getLock('report').acquire({ leaseMs: 30_000 });
      await fleet.kill(2);
      await fleet.restart(2);
      await fleet.restart(3);
      await fleet.restart(4);
      // Bounded by the second client's reconnects to the restarted masters (ioredis backs off up to 2 s), twice over for a loaded machine.
      const intruder = await eventually(
        () =>
          second.task(() =>
            second
              .getLock('report')
              .tryLock({ leaseMs: 30_000 })
              .catch(() => false),
          ),
        10_000,
      );
      // Redlock's safety argument needs every master to remember its grants: two holders.
      expect(intruder).toBe(true);
      expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['report']);
      expect(hold.signal.aborted).toBe(false);
    });
  });

  // Masters restarted by the tests above sit out no quarantine here (0), unless a test says otherwise.
  describe('spread over every master that is up', () => {
    /** How many masters hold the lock for its most frequent owner. */
    async function heldOn(key: string): Promise<number> {
      const owners = (await lockOnMasters(fleet, key, ALL)).map((hold) => hold.owner);
      return Math.max(0, ...owners.map((owner) => (owner === undefined ? 0 : owners.filter((other) => other === owner).length)));
    }

    it('takes a master that another owner held once it frees up, and releases it there too', async () => {
      const redlock = pool.make(fleet, { restartQuarantineMs: 0 });
      const key = `${redlock.options.keyPrefix}:{spread}`;
      const admin = fleet.client(4);
      await plantHold(admin, key, 'other:1', 60); // a failed partial grant, gone soon
      admin.disconnect();
      const hold = await redlock.getLock('spread').acquire({ leaseMs: 10_000 });
      expect(await eventually(async () => (await heldOn(key)) === 5, 2_000)).toBe(true);
      await hold.unlock();
      expect(await lockOnMasters(fleet, key, ALL)).toEqual([{}, {}, {}, {}, {}]);
    });

    it('takes a master that came back empty on the next renewal', async () => {
      // Renewed every 500 ms; the lease outlasts a loaded host's stalls, and a lost hold fails the waits below at once, with its reason.
      const redlock = pool.make(fleet, { watchdogTimeoutMs: 1_500, restartQuarantineMs: 300 });
      const key = `${redlock.options.keyPrefix}:{renewed}`;
      let hold: LockHandle<undefined> | undefined;
      /** How many masters hold it; throws the loss once the hold is lost. */
      const spread = async (): Promise<number> => {
        if (hold?.signal.aborted) throw hold.signal.reason;
        return heldOn(key);
      };
      // Masters the tests above restarted may still sit out their 300 ms (dated to the second by uptime).
      expect(
        await eventually(
          async () =>
            (hold = await redlock
              .getLock('renewed')
              .acquire()
              .catch(() => undefined)) !== undefined,
          5_000,
        ),
      ).toBe(true);
      expect(await eventually(async () => (await spread()) === 5, 3_000)).toBe(true);
      const [before] = await lockOnMasters(fleet, key, [4]);
      await fleet.kill(4);
      await fleet.restart(4);
      // Came back empty: nothing there, or already a new grant of the hold's (a spread), never the one from before.
      const [after] = await lockOnMasters(fleet, key, [4]);
      expect(after?.op === undefined || (after.owner === before?.owner && after.op !== before?.op)).toBe(true);
      // Once its quarantine is over, the first renewal it answers takes it, even when it answers after
      // the others. The bound: the quarantine (300 ms, up to 1.3 s as uptime counts whole seconds),
      // the client's reconnect (up to 1.1 s), a renewal (500 ms), and slack for a loaded host.
      expect(await eventually(async () => (await spread()) === 5, 5_000)).toBe(true);
      expect(hold?.signal.aborted).toBe(false);
      await hold?.unlock();
      expect(await lockOnMasters(fleet, key, ALL)).toEqual([{}, {}, {}, {}, {}]);
    });

    it('takes a master back where a renewal found its grant gone, though that master answers after the others decided', async () => {
      const proxy = await FaultProxy.start({ port: fleet.port(4) });
      try {
        const redlock = pool.make(fleet, { masters: [...fleet.urls().slice(0, 4), proxy.url], watchdogTimeoutMs: 1_500, restartQuarantineMs: 0 });
        const key = `${redlock.options.keyPrefix}:{late}`;
        const hold = await redlock.getLock('late').acquire();
        const spread = async (): Promise<number> => {
          if (hold.signal.aborted) throw hold.signal.reason;
          return heldOn(key);
        };
        expect(await eventually(async () => (await spread()) === 5, 3_000)).toBe(true);
        // m4's answers now come after the other four have decided each renewal; then its grant goes,
        // as after a restart without persistence.
        proxy.delay(200);
        const admin = fleet.client(4);
        await admin.del(key);
        admin.disconnect();
        // The bound: a renewal (500 ms) whose late answer finds it gone, a spread (two delayed trips), and slack for a loaded host.
        expect(await eventually(async () => (await spread()) === 5, 5_000)).toBe(true);
        proxy.heal();
        await hold.unlock();
      } finally {
        proxy.heal();
        await pool.closeAll();
        await proxy.stop();
      }
    });

    it('holds sit on at least 4 of 5 masters 50 ms into a hold, under contention of 4 clients on one name', async () => {
      const keyPrefix = uniquePrefix();
      const key = `${keyPrefix}:{hot}`;
      const clients = Array.from({ length: 4 }, () => pool.make(fleet, { keyPrefix, restartQuarantineMs: 0 }));
      const spreads: number[] = [];
      let inside = 0;
      let overlaps = 0;
      await Promise.all(
        clients.flatMap((client) =>
          Array.from({ length: 2 }, () =>
            client.task(async () => {
              const lock = client.getLock('hot');
              for (let i = 0; i < 4; i++) {
                await lock.lock({ leaseMs: 10_000 });
                if (++inside > 1) overlaps++;
                await new Promise((resolve) => setTimeout(resolve, 50));
                spreads.push(await heldOn(key));
                inside--;
                await lock.unlock();
              }
            }),
          ),
        ),
      );
      expect(overlaps).toBe(0);
      expect(spreads).toHaveLength(32);
      // The bench measures the share over many holds; here a sanity bound.
      expect(spreads.filter((count) => count >= 4).length).toBeGreaterThanOrEqual(28);
    });
  });

  describe('local hand-off', () => {
    it('hands the hold to the next waiting task, which holds it on a majority; the first task cannot take it back meanwhile', async () => {
      const redlock = pool.make(fleet, { restartQuarantineMs: 0 });
      const lock = redlock.getLock('handoff');
      const key = `${redlock.options.keyPrefix}:{handoff}`;
      let firstHolds: () => void = () => undefined;
      const holding = new Promise<void>((resolve) => (firstHolds = resolve));
      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));
      let secondHolds: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (secondHolds = resolve));
      // A release hands off only within 100 ms of the round that won (HANDOFF_WINDOW_MS): nothing between
      // the two waits on Redis, and the owner the masters should keep is the first acquisition's event's.
      const owners: string[] = [];
      redlock.on('lockAcquired', (event) => owners.push(event.owner));
      const first = redlock.task(async () => {
        await lock.lock({ leaseMs: 10_000 });
        const owner = owners[0];
        firstHolds();
        await released;
        await lock.unlock(); // a task waits: handed off, the masters keep this task's owner
        await held;
        expect(owners[1]).not.toBe(owner);
        // Masters asked after the round's majority join the hold as their answers come.
        const onMasters = async (): Promise<(string | undefined)[]> => (await lockOnMasters(fleet, key, ALL)).map((hold) => hold.owner);
        expect(await eventually(async () => (await onMasters()).every((holder) => holder === owner), 2_000)).toBe(true);
        // The masters would let this owner reenter: the client must not.
        expect(await lock.tryLock({ leaseMs: 1_000 })).toBe(false);
        expect(await lock.isHeldByCurrentTask()).toBe(false);
      });
      const second = redlock.task(async () => {
        await holding;
        // Refused at once while a task of this client holds it (no round): it waits in the queue within this turn.
        const waiting = lock.lock({ leaseMs: 10_000 });
        await new Promise((resolve) => setImmediate(resolve));
        release();
        await waiting;
        expect(owners).toHaveLength(2);
        expect(await lock.isHeldByCurrentTask()).toBe(true);
        expect(await lock.isLocked()).toBe(true);
        secondHolds();
      });
      await Promise.all([first, second]);
      expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['handoff']);
      await redlock.task(async () => {
        // Still the second task's: a third task waits for its release.
        expect(await lock.tryLock({ leaseMs: 1_000 })).toBe(false);
      });
    });
  });
});
