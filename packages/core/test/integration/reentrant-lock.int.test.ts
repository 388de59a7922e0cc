import { RedisFleet, takeHoldLeakWarnings } from '@org/rlock-testing';
import { ClientClosedError, IllegalMonitorStateError, InvalidArgumentError, LockAcquireTimeoutError, LockLostError, type RLockClient } from '@org/rlock-core';
import { ClientPool, commandsProcessed, eventually } from './support.js';
import { holdFields, parseHold } from '@org/rlock-core/internal';

describe('RLock', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();
  let client: RLockClient;

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  beforeEach(async () => {
    client = pool.make(fleet.url(0));
    await client.redis.ping(); // connected, so its handshake is not counted below
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  describe('lock', () => {
    it('counts holds of a task and frees the lock after as many unlocks', async () => {
      const lock = client.getLock('counts');
      await client.task(async () => {
        await lock.lock({ leaseMs: 10_000 });
        await lock.lock({ leaseMs: 10_000 });
        await lock.lock({ leaseMs: 10_000 });
        expect(await lock.getHoldCount()).toBe(3);
        expect(await lock.isHeldByCurrentTask()).toBe(true);
        await lock.unlock();
        await lock.unlock();
        expect(await lock.getHoldCount()).toBe(1);
        expect(await lock.isLocked()).toBe(true);
        await lock.unlock();
        expect(await lock.isLocked()).toBe(false);
        expect(await lock.getHoldCount()).toBe(0);
      });
    });

    it('is refused outside a task with IllegalMonitorStateError naming task, withLock and acquire, before any command', async () => {
      const lock = client.getLock('outside');
      const probe = fleet.client(0);
      const before = await commandsProcessed(probe);
      for (const call of [() => lock.lock(), () => lock.tryLock(), () => lock.unlock(), () => lock.getHoldCount(), () => lock.isHeldByCurrentTask()]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(IllegalMonitorStateError);
        expect((error as Error).message).toMatch(/task[\s\S]*withLock[\s\S]*acquire/);
      }
      // Only the two INFO calls of this probe reached the server.
      expect((await commandsProcessed(probe)) - before).toBe(1);
    });

    it('does not let another task of the same process in while held', async () => {
      const lock = client.getLock('exclusive');
      await client.task(() => lock.lock({ leaseMs: 10_000 }));
      expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['exclusive']);
      const other = await client.task(() => lock.tryLock({ leaseMs: 1_000 }));
      expect(other).toBe(false);
    });

    it('rejects with LockAcquireTimeoutError when waitMs runs out, and tryLock gives false', async () => {
      const lock = client.getLock('timeout');
      await client.task(() => lock.lock({ leaseMs: 10_000 }));
      expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['timeout']);
      await client.task(async () => {
        const started = performance.now();
        await expect(lock.lock({ waitMs: 200, leaseMs: 1_000 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);
        expect(performance.now() - started).toBeGreaterThanOrEqual(199);
        expect(await lock.tryLock({ waitMs: 100, leaseMs: 1_000 })).toBe(false);
      });
    });

    it("rejects with the signal's reason when the wait is aborted", async () => {
      const lock = client.getLock('abort');
      await client.task(() => lock.lock({ leaseMs: 10_000 }));
      expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['abort']);
      const controller = new AbortController();
      const reason = new Error('caller gave up');
      const waiting = client.task(() => lock.lock({ signal: controller.signal, leaseMs: 1_000 }));
      setTimeout(() => controller.abort(reason), 50);
      await expect(waiting).rejects.toBe(reason);
    });
  });

  describe('arguments', () => {
    it.each([0, -1, Number.NaN, Infinity, 1.5, '100'])('refuses leaseMs %p with InvalidArgumentError before any command', async (leaseMs) => {
      const lock = client.getLock('args');
      const probe = fleet.client(0);
      const before = await commandsProcessed(probe);
      await expect(client.task(() => lock.lock({ leaseMs: leaseMs as number }))).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(lock.acquire({ leaseMs: leaseMs as number })).rejects.toBeInstanceOf(InvalidArgumentError);
      expect((await commandsProcessed(probe)) - before).toBe(1);
    });

    it('refuses a negative or fractional waitMs, and an unknown option', async () => {
      const lock = client.getLock('args');
      await expect(client.task(() => lock.tryLock({ waitMs: -1 }))).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(client.task(() => lock.tryLock({ waitMs: 0.5 }))).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(client.task(() => lock.tryLock({ leaseMS: 5 } as never))).rejects.toThrow(/unknown option "leaseMS"/);
    });

    it('checks argument errors before the task requirement', async () => {
      await expect(client.getLock('x').lock({ leaseMs: -5 })).rejects.toBeInstanceOf(InvalidArgumentError);
    });

    it.each([
      ['empty', ''],
      ['with braces', 'a{b}'],
      ['of 1,025 bytes', 'x'.repeat(1025)],
    ])('throws synchronously for a name %s', (_label, name) => {
      expect(() => client.getLock(name)).toThrow(InvalidArgumentError);
    });

    it('refuses a watchdog lease on a client without a renewer', async () => {
      await expect(client.task(() => client.getLock('wd').lock())).rejects.toThrow(/leaseMs is required/);
    });
  });

  describe('unlock', () => {
    it('throws IllegalMonitorStateError when another task holds it, and leaves the hold intact', async () => {
      const lock = client.getLock('owner');
      await client.task(() => lock.lock({ leaseMs: 10_000 }));
      expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['owner']);
      const ttlBefore = await lock.remainTimeToLive();
      await expect(client.task(() => lock.unlock())).rejects.toBeInstanceOf(IllegalMonitorStateError);
      const intruder = pool.make(fleet.url(0));
      await expect(intruder.task(() => intruder.getLock('owner').unlock())).rejects.toBeInstanceOf(IllegalMonitorStateError);
      expect(await lock.isLocked()).toBe(true);
      expect(await lock.remainTimeToLive()).toBeLessThanOrEqual(ttlBefore);
      expect(await lock.remainTimeToLive()).toBeGreaterThan(ttlBefore - 1_000);
    });

    it('reports a fixed lease that ran out: signal aborts at the deadline, unlock rejects with LockLostError', async () => {
      const lock = client.getLock('expiry');
      const lost: string[] = [];
      client.on('lockLost', (event) => lost.push(event.reason));
      await client.task(async () => {
        const handle = await lock.acquire({ leaseMs: 150 });
        expect(handle.signal.aborted).toBe(false);
        expect(await eventually(() => handle.signal.aborted, 2_000)).toBe(true);
        expect(handle.signal.reason).toBeInstanceOf(LockLostError);
        expect(await eventually(async () => !(await lock.isLocked()), 2_000)).toBe(true);
        const error = await lock.unlock().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LockLostError);
        expect((error as LockLostError).reason).toBe('expired');
      });
      expect(lost).toEqual(['expired']);
      const other = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
      expect(await other.task(() => other.getLock('expiry').tryLock({ leaseMs: 1_000 }))).toBe(true);
      expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['expiry']);
    });

    it('reports LockLostError with reason taken when another owner holds the key now', async () => {
      const lock = client.getLock('taken');
      await client.task(async () => {
        await lock.lock({ leaseMs: 10_000 });
        const keys = (lock as unknown as { keys: { lock: string } }).keys;
        const held = parseHold(await fleet.client(0).hgetall(keys.lock));
        await fleet
          .client(0)
          .multi()
          .del(keys.lock)
          .hset(keys.lock, holdFields({ ...held!, owner: 'someone:else' }))
          .pexpire(keys.lock, 10_000)
          .exec();
        const error = await lock.unlock().catch((e: unknown) => e);
        expect((error as LockLostError).reason).toBe('taken');
        await expect(lock.unlock()).rejects.toBeInstanceOf(IllegalMonitorStateError);
      });
    });
  });

  describe('withLock', () => {
    it("nests in one task, returns fn's value and hands out the same token", async () => {
      const lock = client.getLock('nested');
      const result = await lock.withLock(
        async (outer) => {
          const inner = await lock.withLock(
            async (scope) => {
              expect(await lock.getHoldCount()).toBe(2);
              return scope.token;
            },
            { leaseMs: 5_000 },
          );
          expect(inner).toBe(outer.token);
          expect(await lock.getHoldCount()).toBe(1);
          return 'done';
        },
        { leaseMs: 5_000 },
      );
      expect(result).toBe('done');
      expect(await lock.isLocked()).toBe(false);
    });

    it("passes fn's error through and releases the lock", async () => {
      const lock = client.getLock('throws');
      const failure = new Error('business failure');
      await expect(lock.withLock(() => Promise.reject(failure), { leaseMs: 5_000 })).rejects.toBe(failure);
      expect(await lock.isLocked()).toBe(false);
    });

    it('rejects with LockLostError when fn resolves after the hold was lost', async () => {
      const lock = client.getLock('lost');
      await expect(
        lock.withLock(
          async ({ signal }) => {
            await lock.forceUnlock();
            expect(signal.aborted).toBe(true);
            return 'finished anyway';
          },
          { leaseMs: 5_000 },
        ),
      ).rejects.toMatchObject({ name: 'LockLostError', reason: 'forced' });
    });

    it('refuses a bare unlock() of its own acquisition, saying the scope releases it, and still releases it once', async () => {
      const lock = client.getLock('scoped');
      const result = await lock.withLock(
        async () => {
          const error = await lock.unlock().catch((e: unknown) => e);
          expect(error).toBeInstanceOf(IllegalMonitorStateError);
          expect((error as Error).message).toMatch(/only through withLock\(\) or a handle, which releases it when it ends \(nothing was released\)/);
          expect(await lock.getHoldCount()).toBe(1); // nothing was released, in Redis either
          // A lock() inside the scope is the callback's to unlock.
          await lock.lock({ leaseMs: 5_000 });
          await lock.unlock();
          expect(await lock.isHeldByCurrentTask()).toBe(true);
          return 'done';
        },
        { leaseMs: 5_000 },
      );
      expect(result).toBe('done');
      expect(await lock.isLocked()).toBe(false);
    });

    it("refuses a bare unlock() of a handle's acquisition run as its owner", async () => {
      const lock = client.getLock('handled');
      const handle = await lock.acquire({ leaseMs: 5_000 });
      await expect(handle.run(() => lock.unlock())).rejects.toThrow(IllegalMonitorStateError);
      expect(await lock.isLocked()).toBe(true);
      await handle.unlock();
      expect(await lock.isLocked()).toBe(false);
    });
  });

  describe('acquire', () => {
    it('works outside a task with its own owner; run() reenters; a released handle refuses run()', async () => {
      const lock = client.getLock('handle');
      const handle = await lock.acquire({ leaseMs: 5_000 });
      expect(handle.token).toMatch(/^\d+$/);
      await handle.run(async () => {
        await lock.lock({ leaseMs: 5_000 });
        expect(await lock.getHoldCount()).toBe(2);
        await lock.unlock();
      });
      expect(await client.task(() => lock.tryLock({ leaseMs: 1_000 }))).toBe(false);
      await handle.unlock();
      expect(await lock.isLocked()).toBe(false);
      await expect(handle.run(async () => 1)).rejects.toBeInstanceOf(IllegalMonitorStateError);
      await expect(handle.unlock()).rejects.toBeInstanceOf(IllegalMonitorStateError);
    });

    it('is released when an await using scope ends', async () => {
      const lock = client.getLock('dispose');
      {
        await using held = await lock.acquire({ leaseMs: 5_000 });
        expect(held.signal.aborted).toBe(false);
        expect(await lock.isLocked()).toBe(true);
      }
      expect(await lock.isLocked()).toBe(false);
    });

    it('is a hold of the current task when called inside one', async () => {
      const lock = client.getLock('in-task');
      await client.task(async () => {
        const handle = await lock.acquire({ leaseMs: 5_000 });
        await lock.lock({ leaseMs: 5_000 });
        expect(await lock.getHoldCount()).toBe(2);
        await lock.unlock();
        await handle.unlock();
        expect(await lock.isLocked()).toBe(false);
      });
    });
  });

  describe('fencing tokens', () => {
    it('strictly increase across holders and clients, and stay the same on reentry', async () => {
      const other = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
      let last = 0n;
      for (let i = 0; i < 30; i++) {
        const owner = i % 2 === 0 ? client : other;
        const lock = owner.getLock('fenced');
        await lock.withLock(
          async ({ token }) => {
            const value = BigInt(token);
            expect(value > last).toBe(true);
            last = value;
            await lock.withLock(async (inner) => expect(inner.token).toBe(token), { leaseMs: 5_000 });
          },
          { leaseMs: 5_000 },
        );
      }
    });
  });

  describe('forceUnlock', () => {
    it('frees the lock, wakes a waiter and marks the local hold lost', async () => {
      const lock = client.getLock('force');
      const handle = await lock.acquire({ leaseMs: 60_000 });
      const waiterClient = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
      const waiting = waiterClient.getLock('force').acquire({ leaseMs: 5_000, waitMs: 5_000 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await lock.forceUnlock()).toBe(true);
      const next = await waiting;
      expect(handle.signal.reason).toMatchObject({ name: 'LockLostError', reason: 'forced' });
      await next.unlock();
      expect(await lock.forceUnlock()).toBe(false);
    });
  });

  describe('remainTimeToLive', () => {
    it('gives the TTL in ms while held and -2 when free', async () => {
      const lock = client.getLock('ttl');
      expect(await lock.remainTimeToLive()).toBe(-2);
      const handle = await lock.acquire({ leaseMs: 8_000 });
      const ttl = await lock.remainTimeToLive();
      expect(ttl).toBeGreaterThan(7_000);
      expect(ttl).toBeLessThanOrEqual(8_000);
      await handle.unlock();
    });
  });

  describe('close', () => {
    it('rejects waiters with ClientClosedError, releases holds and aborts their signals with reason closed', async () => {
      const lock = client.getLock('closing');
      const handle = await lock.acquire({ leaseMs: 60_000 });
      const waiting = client.task(() => lock.lock({ leaseMs: 1_000 }));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const report = await client.close();
      await expect(waiting).rejects.toBeInstanceOf(ClientClosedError);
      expect(report).toEqual({ released: ['closing'], failed: [] });
      expect(handle.signal.reason).toMatchObject({ name: 'LockLostError', reason: 'closed' });
      const other = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
      expect(await other.getLock('closing').isLocked()).toBe(false);
      await expect(client.task(() => lock.lock({ leaseMs: 1_000 }))).rejects.toBeInstanceOf(ClientClosedError);
    });

    it('leaves a connection it was given open', async () => {
      const given = fleet.client(0);
      const borrowed = pool.make(fleet.url(0), { redis: given });
      await borrowed.getLock('x').withLock(async () => undefined, { leaseMs: 1_000 });
      await borrowed.close();
      expect(await given.ping()).toBe('PONG');
    });
  });
});
