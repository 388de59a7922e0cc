import { createClient, InvalidArgumentError, LockLostError, type LockLostEvent, type RLockClient } from '@org/rlock';
import { RedisFleet, eventually, takeHoldLeakWarnings, uniquePrefix } from '@org/rlock-testing';
import { parseHold } from '@org/rlock-core/internal';

/**
 * `maxLeaseMs` caps how long the watchdog keeps a hold alive: a hold nobody
 * releases is renewed past its lease until the cap, then lost with its own
 * reason and its key cleared, so others get the lock.
 */
describe('maxLeaseMs', () => {
  let fleet: RedisFleet;
  const clients: RLockClient[] = [];

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(() => fleet.stop());

  function client(keyPrefix: string): RLockClient {
    // A 300 ms watchdog lease, renewed every 100 ms.
    const made = createClient({ redis: fleet.url(0), keyPrefix, watchdogTimeoutMs: 300 });
    made.on('error', () => undefined);
    clients.push(made);
    return made;
  }

  describe('lock()', () => {
    it('renews the hold past its lease, then stops at the cap: lost with reason maxLease, key cleared', async () => {
      const keyPrefix = uniquePrefix();
      const holder = client(keyPrefix);
      const other = client(keyPrefix);
      const lost: LockLostEvent[] = [];
      holder.on('lockLost', (event) => lost.push(event));
      const key = `${keyPrefix}:{capped}`;
      const lock = holder.getLock('capped');
      await holder.task(async () => {
        const startedAt = performance.now();
        await lock.lock({ maxLeaseMs: 1_200 });
        // Renewed: still held after several leases of 300 ms.
        expect(await eventually(async () => performance.now() - startedAt > 700, 2_000)).toBe(true);
        expect(lost).toEqual([]);
        expect(parseHold(await fleet.client(0).hgetall(key))?.owner).toMatch(new RegExp(`^${holder.clientId}:`));
        // At the cap: lost, and the key is gone at once (not one lease later).
        expect(await eventually(async () => lost.length === 1, 3_000)).toBe(true);
        expect(performance.now() - startedAt).toBeGreaterThanOrEqual(1_150);
        expect(lost[0]).toMatchObject({ name: 'capped', reason: 'maxLease' });
        expect(await eventually(async () => (await fleet.client(0).exists(key)) === 0, 2_000)).toBe(true);
        const error = await lock.unlock().catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(LockLostError);
        expect((error as LockLostError).reason).toBe('maxLease');
      });
      expect(await other.task(() => other.getLock('capped').tryLock({ leaseMs: 1_000 }))).toBe(true);
      expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['capped']);
    });

    it('keeps the earliest cap of nested acquisitions', async () => {
      const holder = client(uniquePrefix());
      const lost: LockLostEvent[] = [];
      holder.on('lockLost', (event) => lost.push(event));
      const lock = holder.getLock('nested');
      await holder.task(async () => {
        const startedAt = performance.now();
        await lock.lock({ maxLeaseMs: 600 });
        await lock.lock({ maxLeaseMs: 60_000 });
        await lock.lock();
        expect(await eventually(async () => lost.length === 1, 3_000)).toBe(true);
        expect(performance.now() - startedAt).toBeLessThan(2_000);
        expect(lost[0]?.reason).toBe('maxLease');
      });
    });
  });

  describe('withLock()', () => {
    it("aborts the section's signal with reason maxLease and rejects with LockLostError", async () => {
      const holder = client(uniquePrefix());
      let reason: unknown;
      const outcome = await holder
        .getLock('section')
        .withLock(
          async ({ signal }) => {
            await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
            reason = signal.reason;
          },
          { maxLeaseMs: 500 },
        )
        .catch((error: unknown) => error);
      expect(reason).toBeInstanceOf(LockLostError);
      expect((reason as LockLostError).reason).toBe('maxLease');
      expect(outcome).toBeInstanceOf(LockLostError);
    });
  });

  describe('acquire()', () => {
    it('caps a handle taken outside a task', async () => {
      const keyPrefix = uniquePrefix();
      const holder = client(keyPrefix);
      const handle = await holder.getLock('handle').acquire({ maxLeaseMs: 500 });
      expect(await eventually(async () => handle.signal.aborted, 3_000)).toBe(true);
      expect((handle.signal.reason as LockLostError).reason).toBe('maxLease');
      expect(await eventually(async () => (await fleet.client(0).exists(`${keyPrefix}:{handle}`)) === 0, 2_000)).toBe(true);
    });

    it('refuses a bad maxLeaseMs before sending anything', async () => {
      const holder = client(uniquePrefix());
      await expect(holder.getLock('bad').acquire({ maxLeaseMs: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(holder.getLock('bad').acquire({ maxLeaseMs: 1.5 })).rejects.toBeInstanceOf(InvalidArgumentError);
    });
  });
});
