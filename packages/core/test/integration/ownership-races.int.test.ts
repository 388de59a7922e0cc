import { RedisFleet } from '@org/rlock-testing';
import { ClientClosedError, InvalidArgumentError, LockLostError, type RLockClient } from '@org/rlock-core';
import { ClientPool, eventually } from './support.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('RLock ownership races', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();
  let client: RLockClient;
  let other: RLockClient;

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  beforeEach(() => {
    client = pool.make(fleet.url(0));
    other = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  describe('unlock of a lost hold', () => {
    it('never releases a newer hold of the same task', async () => {
      const lock = client.getLock('generations');
      await client.task(async () => {
        const first = await lock.acquire({ leaseMs: 100 });
        expect(await eventually(() => first.signal.aborted, 2_000)).toBe(true);
        expect(await eventually(async () => !(await lock.isLocked()), 2_000)).toBe(true);
        const second = await lock.acquire({ leaseMs: 10_000 });
        await expect(first.unlock()).rejects.toBeInstanceOf(LockLostError);
        expect(await other.task(() => other.getLock('generations').tryLock({ leaseMs: 1_000 }))).toBe(false);
        expect(second.signal.aborted).toBe(false);
        await second.unlock();
        expect(await lock.isLocked()).toBe(false);
      });
    });

    it('makes a withLock whose hold expired reject, even while a sibling branch holds the lock anew', async () => {
      const lock = client.getLock('siblings');
      await client.task(async () => {
        // Ordered by events, not sleeps: the first scope's hold is known lost and
        // its key gone before the sibling takes the lock anew, and the first scope
        // ends while the sibling still holds it.
        let lost!: () => void;
        const firstLost = new Promise<void>((resolve) => (lost = resolve));
        let taken!: () => void;
        const siblingHolds = new Promise<void>((resolve) => (taken = resolve));
        const first = lock.withLock(
          async ({ signal }) => {
            expect(await eventually(() => signal.aborted, 2_000)).toBe(true);
            lost();
            await siblingHolds;
            return 'first';
          },
          { leaseMs: 100 },
        );
        const second = (async () => {
          await firstLost;
          expect(await eventually(async () => !(await lock.isLocked()), 2_000)).toBe(true);
          return lock.withLock(
            async ({ signal }) => {
              taken();
              await first.catch(() => undefined);
              const stolen = await other.task(() => other.getLock('siblings').tryLock({ leaseMs: 1_000 }));
              return { stolen, aborted: signal.aborted };
            },
            { leaseMs: 10_000 },
          );
        })();
        const settled = await Promise.allSettled([first, second]);
        expect(settled[0]).toMatchObject({ status: 'rejected', reason: { name: 'LockLostError' } });
        expect(settled[1]).toEqual({ status: 'fulfilled', value: { stolen: false, aborted: false } });
      });
    });

    it('makes isHeldByCurrentTask and getHoldCount answer false and 0 once the hold is known lost', async () => {
      const lock = client.getLock('known-lost');
      await client.task(async () => {
        const handle = await lock.acquire({ leaseMs: 200 });
        expect(await lock.isHeldByCurrentTask()).toBe(true);
        expect(await eventually(() => handle.signal.aborted, 2_000)).toBe(true);
        expect(await lock.isHeldByCurrentTask()).toBe(false);
        expect(await lock.getHoldCount()).toBe(0);
      });
    });
  });

  describe('cancelled acquisitions', () => {
    it('leaves no extra count when an aborted acquire races another acquire of the same task', async () => {
      const lock = client.getLock('aborted');
      await lock.isLocked();
      for (let round = 0; round < 20; round++) {
        await client.task(async () => {
          const controller = new AbortController();
          const aborted = lock.lock({ leaseMs: 10_000, signal: controller.signal }).then(
            () => true,
            () => false,
          );
          const plain = lock.lock({ leaseMs: 10_000 });
          controller.abort(new Error('caller gave up'));
          const abortedGotIt = await aborted;
          await plain;
          await lock.unlock();
          if (abortedGotIt) await lock.unlock();
        });
        expect(await lock.isLocked()).toBe(false);
      }
    });

    it('leaves no key behind when close() lands while an acquire is in flight', async () => {
      const redis = fleet.client(0);
      for (let round = 0; round < 10; round++) {
        const closing = pool.make(fleet.url(0));
        await closing.redis.ping();
        const lock = closing.getLock(`in-flight-${round}`);
        const pending = closing
          .task(() => lock.lock({ leaseMs: 30_000 }))
          .then(
            () => 'acquired',
            (error: Error) => error.name,
          );
        await new Promise((resolve) => setImmediate(resolve));
        await closing.close();
        expect(['acquired', 'ClientClosedError']).toContain(await pending);
        expect(await redis.exists(`${closing.options.keyPrefix}:{in-flight-${round}}`)).toBe(0);
      }
    });

    it('rejects a waiting lock() with ClientClosedError whenever close() lands', async () => {
      const holder = await other.getLock('closing-waiter').acquire({ leaseMs: 30_000 });
      for (let round = 0; round < 20; round++) {
        const closing = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
        const waiting = closing.task(() => closing.getLock('closing-waiter').lock({ leaseMs: 1_000 }));
        await sleep(round % 5);
        await closing.close();
        await expect(waiting).rejects.toBeInstanceOf(ClientClosedError);
      }
      await holder.unlock();
    });
  });

  describe('branches of one task', () => {
    it('lets a waiting sibling reenter as soon as its branch acquires', async () => {
      const holder = await other.getLock('branches').acquire({ leaseMs: 30_000 });
      const lock = client.getLock('branches');
      await client.task(async () => {
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const times: number[] = [];
        const branch = async (holdUntilGate: boolean) => {
          await lock.lock({ leaseMs: 30_000 });
          times.push(performance.now());
          if (holdUntilGate) await gate;
          else release();
          await lock.unlock();
        };
        const both = Promise.all([branch(true), branch(false)]);
        await sleep(100);
        await holder.unlock();
        await both;
        // maxSleepMs is 10 s here: reentering quickly can only come from the wake.
        expect(Math.abs(times[1]! - times[0]!)).toBeLessThan(1_000);
      });
      expect(await lock.isLocked()).toBe(false);
    });
  });

  describe('leases too short to be valid', () => {
    it.each([1, 2])('refuses leaseMs %p: lease minus drift would not be positive', async (leaseMs) => {
      await expect(client.task(() => client.getLock('short').lock({ leaseMs }))).rejects.toBeInstanceOf(InvalidArgumentError);
    });
  });

  describe('listeners that throw', () => {
    it('reports a throwing lockLost listener as an error event instead of letting it escape a timer', async () => {
      const errors: Error[] = [];
      client.on('lockLost', () => {
        throw new Error('listener bug');
      });
      client.on('error', (error) => errors.push(error));
      const handle = await client.getLock('thrower').acquire({ leaseMs: 50 });
      expect(await eventually(() => handle.signal.aborted, 2_000)).toBe(true);
      expect(errors.map((error) => error.message)).toContain('listener bug');
      await expect(client.close()).resolves.toBeDefined();
    });

    it('keeps a grant whose lockAcquired listener throws, and reports the listener as an error event', async () => {
      const errors: Error[] = [];
      client.on('lockAcquired', () => {
        throw new Error('acquired listener bug');
      });
      client.on('error', (error) => errors.push(error));
      const lock = client.getLock('acquired-thrower');
      const handle = await lock.acquire({ leaseMs: 5_000 });
      expect(errors.map((error) => error.message)).toEqual(['acquired listener bug']);
      await handle.unlock();
      expect(await lock.isLocked()).toBe(false);
    });
  });
});
