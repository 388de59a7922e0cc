import { jest } from '@jest/globals';
import { createClient, createRedlock, RedisCommandError, type RedlockClient, type RLockClient } from '@org/rlock';
import { RedisFleet, eventually, uniquePrefix } from '@org/rlock-testing';
import type { Redis } from 'ioredis';

/**
 * A Redis user without channel rights (`resetchannels`, Redis 7's default for a new user) may change every
 * object but not announce it. Redis keeps what a script wrote before a refused PUBLISH, so the change must
 * count once, its call must resolve, and the client must say so (warning RLOCK_PUBLISH_REFUSED and `error`,
 * once); the other client's waiter comes in by its timed retry (a third of the watchdog timeout).
 */
describe('an announcement refused by an ACL', () => {
  let fleet: RedisFleet;
  let admin: Redis;
  const clients: (RLockClient | RedlockClient)[] = [];
  let warnings: { message: string; code: unknown }[];

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
    admin = fleet.client(0);
    await admin.call('ACL', 'SETUSER', 'nochannels', 'on', '>pw', '~*', 'resetchannels', '+@all');
  });
  beforeEach(() => {
    warnings = [];
    jest.spyOn(process, 'emitWarning').mockImplementation((message: string | Error, options?: unknown) => {
      warnings.push({ message: String(message), code: (options as { code?: string } | undefined)?.code });
    });
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(async () => {
    await admin.quit();
    await fleet.stop();
  });

  /** The client without channel rights and a client with them, on one key prefix; the first's `error` events are kept. */
  function pair(): { restricted: RLockClient; other: RLockClient; errors: Error[]; prefix: string } {
    const prefix = uniquePrefix();
    const errors: Error[] = [];
    const restricted = createClient({ redis: `redis://nochannels:pw@127.0.0.1:${fleet.port(0)}`, keyPrefix: prefix, watchdogTimeoutMs: 3_000 });
    restricted.on('error', (error) => errors.push(error));
    const other = createClient({ redis: fleet.url(0), keyPrefix: prefix, watchdogTimeoutMs: 3_000 });
    other.on('error', () => undefined);
    clients.push(restricted, other);
    return { restricted, other, errors, prefix };
  }

  /** Said once, and only through the warning and one `error` (the notice channel's refused SUBSCRIBE is another matter). */
  function expectReportedOnce(errors: Error[]): void {
    const refused = warnings.filter((warning) => warning.code === 'RLOCK_PUBLISH_REFUSED');
    expect(refused).toHaveLength(1);
    expect(refused[0]?.message).toMatch(/the change itself was made/);
    const reported = errors.filter((error) => error.message === refused[0]?.message);
    expect(reported).toHaveLength(1);
    expect(reported[0]).toBeInstanceOf(RedisCommandError);
  }

  /** Until `key` exists: the other client's waiter has tried and is known to Redis as waiting. */
  const waitingIn = async (key: string): Promise<void> => {
    expect(await eventually(async () => (await admin.exists(key)) === 1, 5_000)).toBe(true);
  };

  /** Until the other client listens on `channel` (its waiter tries once subscribed; either order gives the same counts). */
  const listening = async (channel: string): Promise<void> => {
    expect(await eventually(async () => (await admin.pubsub('NUMSUB', channel))[1] === 1, 5_000)).toBe(true);
  };

  it.each([
    ['lock', (client: RLockClient) => client.getLock('res')],
    ['non-reentrant lock', (client: RLockClient) => client.getNonReentrantLock('res')],
  ])('%s: unlock() resolves, the key is gone once, and the waiter takes the lock by its timed retry', async (_kind, get) => {
    const { restricted, other, errors, prefix } = pair();
    // Twice: a second refused announcement is not said again.
    for (let round = 0; round < 2; round++) {
      await restricted.task(async () => {
        await get(restricted).lock();
        const waiting = other.task(async () => {
          await get(other).lock();
          const count = await get(other).getHoldCount();
          await get(other).unlock();
          return count;
        });
        await waitingIn(`${prefix}:{res}:clients`);
        await expect(get(restricted).unlock()).resolves.toBeUndefined();
        expect(await get(restricted).isHeldByCurrentTask()).toBe(false);
        expect(await waiting).toBe(1);
      });
      // Both releases went through once: nothing is left.
      expect(await admin.exists(`${prefix}:{res}`)).toBe(0);
    }
    expectReportedOnce(errors);
  });

  it('lock: releases that queue behind 4 unanswered calls go as one batch; each resolves, and the refusal is said once', async () => {
    const { restricted, other, errors, prefix } = pair();
    const names = Array.from({ length: 8 }, (_, i) => `res${i}`);
    let go!: () => void;
    const released = new Promise<void>((resolve) => (go = resolve));
    const locked: Promise<void>[] = [];
    // Each holder unlocks once `go` is called: the eight unlock() calls are made in one turn.
    const unlocked = names.map((name) =>
      restricted.task(async () => {
        const lock = restricted.getLock(name);
        const held = lock.lock();
        locked.push(held);
        await held;
        await released;
        await lock.unlock();
      }),
    );
    await Promise.all(locked);
    // Waiters on the last four only: the releases that announce (and are refused) are the batch's.
    const contended = names.slice(4);
    const waiting = contended.map((name) =>
      other.task(async () => {
        await other.getLock(name).lock();
        await other.getLock(name).unlock();
        return name;
      }),
    );
    for (const name of contended) await waitingIn(`${prefix}:{${name}}:clients`);
    // Four go at once, the other four queue behind them as one releaseBatch call.
    go();
    await expect(Promise.all(unlocked)).resolves.toEqual(names.map(() => undefined));
    expect(await Promise.all(waiting)).toEqual(contended);
    expect(await admin.exists(...names.map((name) => `${prefix}:{${name}}`))).toBe(0);
    expectReportedOnce(errors);
  });

  it('fair lock: unlock() hands the lock to the queued waiter, who holds it once', async () => {
    const { restricted, other, errors, prefix } = pair();
    await restricted.task(async () => {
      await restricted.getFairLock('res').lock();
      const waiting = other.task(async () => {
        await other.getFairLock('res').lock();
        const count = await other.getFairLock('res').getHoldCount();
        const info = await other.inspect('res');
        await other.getFairLock('res').unlock();
        return { count, holders: info?.holders.map((holder) => holder.count) };
      });
      await waitingIn(`${prefix}:{res}:queue`);
      await expect(restricted.getFairLock('res').unlock()).resolves.toBeUndefined();
      expect(await waiting).toEqual({ count: 1, holders: [1] });
    });
    expect(await admin.exists(`${prefix}:{res}`)).toBe(0);
    expectReportedOnce(errors);
  });

  it('read-write lock: the writer unlock() resolves and the waiting reader enters', async () => {
    const { restricted, other, errors, prefix } = pair();
    await restricted.task(async () => {
      await restricted.getReadWriteLock('res').writeLock().lock();
      const waiting = other.task(async () => {
        await other.getReadWriteLock('res').readLock().lock();
        const count = await other.getReadWriteLock('res').readLock().getHoldCount();
        await other.getReadWriteLock('res').readLock().unlock();
        return count;
      });
      await listening(`${prefix}:{res}:release`);
      await expect(restricted.getReadWriteLock('res').writeLock().unlock()).resolves.toBeUndefined();
      expect(await waiting).toBe(1);
    });
    expect(await admin.exists(`${prefix}:{res}`)).toBe(0);
    expectReportedOnce(errors);
  });

  it('semaphore: release(3) resolves and counts once; the waiting acquire takes one', async () => {
    const { restricted, other, errors, prefix } = pair();
    const waiting = other.getSemaphore('res').acquire(1);
    await listening(`${prefix}:{res}:permits`);
    await expect(restricted.getSemaphore('res').release(3)).resolves.toBeUndefined();
    await waiting;
    expect(await other.getSemaphore('res').availablePermits()).toBe(2);
    expectReportedOnce(errors);
  });

  it('permit semaphore: a permit released resolves and goes back once; the waiter takes it', async () => {
    const { restricted, other, errors, prefix } = pair();
    await restricted.getPermitExpirableSemaphore('res').trySetPermits(1);
    const permit = await restricted.getPermitExpirableSemaphore('res').acquire();
    const waiting = other.getPermitExpirableSemaphore('res').acquire({ leaseMs: 10_000 });
    await listening(`${prefix}:{res}:permits`);
    await expect(permit.release()).resolves.toBeUndefined();
    const taken = await waiting;
    expect(await other.getPermitExpirableSemaphore('res').availablePermits()).toBe(0);
    await taken.release();
    expect(await other.getPermitExpirableSemaphore('res').availablePermits()).toBe(1);
    expectReportedOnce(errors);
  });

  it('count-down latch: countDown() to zero resolves once; the awaiter returns true', async () => {
    const { restricted, other, errors, prefix } = pair();
    await other.getCountDownLatch('res').trySetCount(2);
    const awaiting = other.getCountDownLatch('res').await();
    await listening(`${prefix}:{res}:zero`);
    await expect(restricted.getCountDownLatch('res').countDown()).resolves.toBe(1);
    await expect(restricted.getCountDownLatch('res').countDown()).resolves.toBe(0);
    await expect(restricted.getCountDownLatch('res').countDown()).resolves.toBe(0);
    expect(await awaiting).toBe(true);
    expect(await other.getCountDownLatch('res').getCount()).toBe(0);
    expectReportedOnce(errors);
  });

  it('leader election: resign() resolves and the next candidate is elected with a larger epoch', async () => {
    const { restricted, other, errors, prefix } = pair();
    const leader = await restricted.getLeaderElection('res').elect();
    const next = other.getLeaderElection('res').elect();
    await waitingIn(`${prefix}:{res}:clients`);
    await expect(leader.resign()).resolves.toBeUndefined();
    const elected = await next;
    expect(BigInt(elected.epoch)).toBeGreaterThan(BigInt(leader.epoch));
    expect((await other.getLeaderElection('res').currentLeader())?.owner).toBe(elected.owner);
    await elected.resign();
    expectReportedOnce(errors);
  });

  it('Redlock: unlock() resolves on its master and the waiter takes the lock by its timed retry', async () => {
    const keyPrefix = uniquePrefix();
    const errors: Error[] = [];
    const restricted = createRedlock({ masters: [`redis://nochannels:pw@127.0.0.1:${fleet.port(0)}`], keyPrefix, watchdogTimeoutMs: 3_000 });
    restricted.on('error', (error) => errors.push(error));
    const other = createRedlock({ masters: [fleet.url(0)], keyPrefix, watchdogTimeoutMs: 3_000 });
    other.on('error', () => undefined);
    clients.push(restricted, other);
    const held = await restricted.getLock('res').acquire();
    const waiting = other.getLock('res').acquire({ waitMs: 10_000 });
    await listening(`${keyPrefix}:{res}:release`);
    await expect(held.unlock()).resolves.toBeUndefined();
    const taken = await waiting;
    expect(await other.getLock('res').isLocked()).toBe(true);
    await taken.unlock();
    expect(await admin.exists(`${keyPrefix}:{res}`)).toBe(0);
    expectReportedOnce(errors);
  });

  it('forceUnlock(): frees the lock once and resolves true; the holder learns of it from Redis', async () => {
    const { restricted, other, errors, prefix } = pair();
    const held = await other.getLock('res').acquire();
    await expect(restricted.getLock('res').forceUnlock()).resolves.toBe(true);
    expect(await admin.exists(`${prefix}:{res}`)).toBe(0);
    // No notice reached it: the next renewal (every second) finds the key gone.
    expect(await eventually(() => held.signal.aborted, 5_000)).toBe(true);
    expectReportedOnce(errors);
  });
});
