import {
  ClientClosedError,
  IllegalMonitorStateError,
  InvalidArgumentError,
  LockAcquireTimeoutError,
  LockLostError,
  type LockAcquiredEvent,
  type LockLostEvent,
  type LockReleasedEvent,
  RLockClient,
} from '@org/rlock-core';
import { createWatchdog } from '@org/rlock-watchdog';
import { RedisFleet } from '@org/rlock-testing';
import { fixture, runChild, startChild } from './child-processes.js';
import { ClientPool, commandCalls, eventually, uniquePrefix } from './support.js';

describe('RPermitExpirableSemaphore', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();
  const watched: RLockClient[] = [];

  /** A client with the watchdog (what @org/rlock's createClient wires), closed after each test. */
  const withWatchdog = (keyPrefix: string, watchdogTimeoutMs = 30_000): RLockClient => {
    const client = new RLockClient({ redis: fleet.url(0), keyPrefix, watchdogTimeoutMs, renewer: createWatchdog() });
    watched.push(client);
    return client;
  };

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(async () => {
    await pool.closeAll();
    await Promise.all(watched.splice(0).map((client) => client.close()));
  });
  afterAll(() => fleet.stop());

  const scriptCalls = async () => {
    const redis = fleet.client(0);
    return (await commandCalls(redis, 'evalsha')) + (await commandCalls(redis, 'eval'));
  };

  describe('arguments', () => {
    it('refuses bad counts, options and ids with InvalidArgumentError before any command', async () => {
      const client = pool.make(fleet.url(0));
      const semaphore = client.getPermitExpirableSemaphore('args');
      const before = await scriptCalls();
      for (const bad of [0, -1, 0.5, Number.NaN, 2 ** 31, '2']) {
        await expect(semaphore.trySetPermits(bad as number)).rejects.toBeInstanceOf(InvalidArgumentError);
      }
      await expect(semaphore.addPermits(0)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(semaphore.acquire({ leaseMs: 2 })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(semaphore.acquire({ leaseMS: 1_000 } as never)).rejects.toThrow(/unknown option "leaseMS"/);
      await expect(semaphore.acquire({ waitMs: 1.5, leaseMs: 1_000 })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(semaphore.release('')).rejects.toBeInstanceOf(InvalidArgumentError);
      // Core alone has no watchdog: a permit without leaseMs would never be renewed.
      await expect(semaphore.acquire()).rejects.toThrow(/leaseMs is required/);
      expect(await scriptCalls()).toBe(before);
    });
  });

  describe('permits', () => {
    it('gives each permit an id, a growing token and a lease; release gives it back once', async () => {
      const client = pool.make(fleet.url(0));
      const semaphore = client.getPermitExpirableSemaphore('basic');
      expect(await semaphore.trySetPermits(2)).toBe(true);
      expect(await semaphore.trySetPermits(2)).toBe(false);
      const first = await semaphore.acquire({ leaseMs: 10_000 });
      const second = await semaphore.acquire({ leaseMs: 10_000 });
      expect(first.id).not.toBe(second.id);
      expect(first.id.startsWith(`${client.clientId}:`)).toBe(true);
      expect(BigInt(second.token) > BigInt(first.token)).toBe(true);
      expect(first.signal.aborted).toBe(false);
      expect(await semaphore.tryAcquire({ leaseMs: 10_000 })).toBeUndefined();
      expect(await semaphore.availablePermits()).toBe(0);
      const prefix = client.options.keyPrefix;
      expect(await client.redis.hgetall(`${prefix}:{basic}:holders`)).toEqual({ [first.id]: first.token, [second.id]: second.token });
      await first.release();
      await expect(first.release()).rejects.toBeInstanceOf(IllegalMonitorStateError);
      expect(await semaphore.availablePermits()).toBe(1);
      await second.release();
      expect(await semaphore.availablePermits()).toBe(2);
    });

    it('releases by id from another client once; a second release by id is refused and changes nothing', async () => {
      const a = pool.make(fleet.url(0));
      const b = pool.make(fleet.url(0), { keyPrefix: a.options.keyPrefix });
      await a.getPermitExpirableSemaphore('byId').trySetPermits(1);
      const permit = await a.getPermitExpirableSemaphore('byId').acquire({ leaseMs: 10_000 });
      await b.getPermitExpirableSemaphore('byId').release(permit.id);
      await expect(b.getPermitExpirableSemaphore('byId').release(permit.id)).rejects.toBeInstanceOf(IllegalMonitorStateError);
      await expect(b.getPermitExpirableSemaphore('byId').release('nobody:1')).rejects.toBeInstanceOf(IllegalMonitorStateError);
      expect(await b.getPermitExpirableSemaphore('byId').availablePermits()).toBe(1);
      // The holder finds it gone: released elsewhere is, for it, a permit lost.
      await expect(permit.release()).rejects.toBeInstanceOf(LockLostError);
      expect(await a.getPermitExpirableSemaphore('byId').availablePermits()).toBe(1);
    });

    it('releases its own permit by id through the engine, and the handle then knows it', async () => {
      const client = pool.make(fleet.url(0));
      const semaphore = client.getPermitExpirableSemaphore('ownById');
      await semaphore.trySetPermits(1);
      const permit = await semaphore.acquire({ leaseMs: 10_000 });
      await semaphore.release(permit.id);
      await expect(permit.release()).rejects.toBeInstanceOf(IllegalMonitorStateError);
      expect(await semaphore.availablePermits()).toBe(1);
    });

    it('releases at the end of an `await using` scope', async () => {
      const client = pool.make(fleet.url(0));
      const semaphore = client.getPermitExpirableSemaphore('scoped');
      await semaphore.trySetPermits(1);
      {
        await using permit = await semaphore.acquire({ leaseMs: 10_000 });
        expect(permit.token).toMatch(/^\d+$/);
        expect(await semaphore.availablePermits()).toBe(0);
      }
      expect(await semaphore.availablePermits()).toBe(1);
    });

    it('reports lockAcquired, lockReleased and lockLost with the permit id as owner', async () => {
      const client = pool.make(fleet.url(0));
      const acquired: LockAcquiredEvent[] = [];
      const released: LockReleasedEvent[] = [];
      const lost: LockLostEvent[] = [];
      client.on('lockAcquired', (event) => acquired.push(event));
      client.on('lockReleased', (event) => released.push(event));
      client.on('lockLost', (event) => lost.push(event));
      const semaphore = client.getPermitExpirableSemaphore('events');
      await semaphore.trySetPermits(2);
      const kept = await semaphore.acquire({ leaseMs: 10_000 });
      const lapsing = await semaphore.acquire({ leaseMs: 100 });
      await kept.release();
      expect(await eventually(() => lost.length === 1, 2_000)).toBe(true);
      expect(acquired.map((e) => [e.name, e.owner, e.token, e.count])).toEqual([
        ['events', kept.id, kept.token, 1],
        ['events', lapsing.id, lapsing.token, 1],
      ]);
      expect(released.map((e) => [e.owner, e.via])).toEqual([[kept.id, 'unlock']]);
      expect(lost.map((e) => [e.owner, e.reason])).toEqual([[lapsing.id, 'expired']]);
    });
  });

  describe('leases', () => {
    it('lapses a fixed lease: the signal aborts with LockLostError, release rejects with it, the permit is back', async () => {
      const client = pool.make(fleet.url(0));
      const semaphore = client.getPermitExpirableSemaphore('lapse');
      await semaphore.trySetPermits(1);
      const permit = await semaphore.acquire({ leaseMs: 200 });
      const reason = await new Promise<unknown>((resolve) => permit.signal.addEventListener('abort', () => resolve(permit.signal.reason)));
      expect(reason).toBeInstanceOf(LockLostError);
      expect((reason as LockLostError).reason).toBe('expired');
      await expect(permit.release()).rejects.toBeInstanceOf(LockLostError);
      expect(await semaphore.availablePermits()).toBe(1);
    });

    it('keeps a permit taken without leaseMs alive through the watchdog, in batches', async () => {
      const prefix = uniquePrefix();
      const client = withWatchdog(prefix, 300);
      const other = pool.make(fleet.url(0), { keyPrefix: prefix });
      let renewedBatches = 0;
      client.on('lockRenewed', () => renewedBatches++);
      const semaphore = client.getPermitExpirableSemaphore('watchdog');
      await semaphore.trySetPermits(2);
      const permits = [await semaphore.acquire(), await semaphore.acquire()];
      // Five leases long: only renewal keeps them.
      const until = performance.now() + 1_500;
      while (performance.now() < until) {
        expect(await other.getPermitExpirableSemaphore('watchdog').tryAcquire({ leaseMs: 1_000 })).toBeUndefined();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(permits.every((permit) => !permit.signal.aborted)).toBe(true);
      expect(renewedBatches).toBeGreaterThanOrEqual(3);
      for (const permit of permits) await permit.release();
      expect(await semaphore.availablePermits()).toBe(2);
    });

    it('extends a lease past its fixed end with extend()', async () => {
      const client = pool.make(fleet.url(0));
      const semaphore = client.getPermitExpirableSemaphore('extend');
      await semaphore.trySetPermits(1);
      const permit = await semaphore.acquire({ leaseMs: 300 });
      await permit.extend(10_000);
      const leaseEnd = Number(await client.redis.zscore(`${client.options.keyPrefix}:{extend}:leases`, permit.id));
      const [seconds] = await client.redis.time();
      expect(leaseEnd).toBeGreaterThan(Number(seconds) * 1000 + 8_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(permit.signal.aborted).toBe(false);
      await permit.release();
      await expect(permit.extend(1_000)).rejects.toBeInstanceOf(IllegalMonitorStateError);
    });

    it('gives permits back on close(), and aborts their signals (reason closed)', async () => {
      const client = pool.make(fleet.url(0));
      const observer = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
      await client.getPermitExpirableSemaphore('close').trySetPermits(1);
      const permit = await client.getPermitExpirableSemaphore('close').acquire({ leaseMs: 60_000 });
      const report = await client.close();
      expect(report.released).toEqual(['close']);
      expect((permit.signal.reason as LockLostError).reason).toBe('closed');
      expect(await observer.getPermitExpirableSemaphore('close').availablePermits()).toBe(1);
      expect(() => client.getPermitExpirableSemaphore('close')).toThrow(ClientClosedError);
    });
  });

  describe('syncReplicas', () => {
    it('does not count a permit no replica acknowledged: the grant is undone and the pool stays full', async () => {
      const setup = pool.make(fleet.url(0));
      // A lone server has no replica: WAIT 1 gets 0 acknowledgements.
      const client = pool.make(fleet.url(0), { keyPrefix: setup.options.keyPrefix, commandTimeoutMs: 500, syncReplicas: { replicas: 1, timeoutMs: 50 } });
      await setup.getPermitExpirableSemaphore('sync').trySetPermits(1);
      await expect(client.getPermitExpirableSemaphore('sync').acquire({ leaseMs: 10_000 })).rejects.toThrow(/replicas acknowledged/);
      expect(await eventually(async () => (await setup.getPermitExpirableSemaphore('sync').availablePermits()) === 1, 2_000)).toBe(true);
      expect(await setup.redis.hlen(`${setup.options.keyPrefix}:{sync}:holders`)).toBe(0);
    });
  });

  describe('waiting', () => {
    it('rejects with LockAcquireTimeoutError at waitMs; tryAcquire resolves undefined', async () => {
      const client = pool.make(fleet.url(0));
      const semaphore = client.getPermitExpirableSemaphore('timeout');
      await semaphore.trySetPermits(1);
      const held = await semaphore.acquire({ leaseMs: 10_000 });
      await expect(semaphore.acquire({ leaseMs: 1_000, waitMs: 100 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);
      expect(await semaphore.tryAcquire({ leaseMs: 1_000, waitMs: 50 })).toBeUndefined();
      await held.release();
    });

    it('wakes a waiter by the release message, with at most two script calls while it waits', async () => {
      const holder = pool.make(fleet.url(0));
      const waiter = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
      await holder.getPermitExpirableSemaphore('wake').trySetPermits(1);
      const held = await holder.getPermitExpirableSemaphore('wake').acquire({ leaseMs: 60_000 });
      const before = await scriptCalls();
      let acquiredAt = 0;
      const waiting = waiter
        .getPermitExpirableSemaphore('wake')
        .acquire({ leaseMs: 5_000 })
        .then((permit) => {
          acquiredAt = performance.now();
          return permit;
        });
      expect(await eventually(async () => (await scriptCalls()) - before >= 2, 5_000)).toBe(true);
      // The lease is 60 s and the capped sleep 10 s: only the release message wakes it in time.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await scriptCalls()) - before).toBe(2);
      const releasedAt = performance.now();
      await held.release();
      const permit = await waiting;
      expect(acquiredAt - releasedAt).toBeLessThan(1_000);
      await permit.release();
    });

    it('wakes a waiter when a lapsed lease ends, without any message', async () => {
      const holder = pool.make(fleet.url(0));
      const waiter = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
      await holder.getPermitExpirableSemaphore('ttl').trySetPermits(1);
      await holder.getPermitExpirableSemaphore('ttl').acquire({ leaseMs: 400 });
      const started = performance.now();
      // The refused try said when the lease ends: the waiter tries then (the
      // capped sleep, 10 s, could not get it this soon).
      const permit = await waiter.getPermitExpirableSemaphore('ttl').acquire({ leaseMs: 5_000, waitMs: 20_000 });
      expect(performance.now() - started).toBeLessThan(3_000);
      await permit.release();
    });
  });

  describe('across processes', () => {
    it('never lets more holders in than there are permits (4 processes × 4 tasks, 3 permits)', async () => {
      const prefix = uniquePrefix();
      const setup = pool.make(fleet.url(0), { keyPrefix: prefix });
      await setup.getPermitExpirableSemaphore('pool').trySetPermits(3);
      const workers = 4;
      const tasks = 4;
      const rounds = 25;
      await Promise.all(
        Array.from({ length: workers }, (_, i) =>
          runChild(fixture('semaphore-worker.mjs'), {
            REDIS_URL: fleet.url(0),
            PREFIX: prefix,
            KIND: 'permit',
            TASKS: String(tasks),
            ROUNDS: String(rounds),
            PERMITS: '3',
            WORKER: String(i),
          }),
        ),
      );
      const redis = fleet.client(0);
      expect(Number(await redis.get(`${prefix}:data:total`))).toBe(workers * tasks * rounds);
      expect(Number((await redis.get(`${prefix}:data:overflows`)) ?? 0)).toBe(0);
      const max = Number(await redis.get(`${prefix}:data:max`));
      expect(max).toBeGreaterThan(1);
      expect(max).toBeLessThanOrEqual(3);
      expect(await setup.getPermitExpirableSemaphore('pool').availablePermits()).toBe(3);
      expect(await redis.exists(`${prefix}:{pool}:leases`, `${prefix}:{pool}:holders`)).toBe(0);
    });

    it.each([
      ['a fixed lease', { LEASE_MS: '1000' }],
      ['a watchdog lease', { WATCHDOG_MS: '1000' }],
    ])("gives a SIGKILLed holder's permit back after its lease (%s)", async (_what, env) => {
      const prefix = uniquePrefix();
      const client = pool.make(fleet.url(0), { keyPrefix: prefix });
      const semaphore = client.getPermitExpirableSemaphore('pool');
      await semaphore.trySetPermits(1);
      const holder = startChild(fixture('permit-holder.mjs'), { REDIS_URL: fleet.url(0), PREFIX: prefix, KIND: 'permit', ...env });
      const line = await holder.line(/^acquired /);
      const crashedId = line.slice('acquired '.length);
      holder.process.kill('SIGKILL');
      expect(await holder.exited).toBeNull();
      // The dead holder's lease end as Redis has it (no renewal can move it now), on the server's clock.
      const leaseEnd = Number(await client.redis.zscore(`${prefix}:{pool}:leases`, crashedId));
      expect(leaseEnd).toBeGreaterThan(0);
      const waitStarted = performance.now();
      const permit = await semaphore.acquire({ leaseMs: 5_000, waitMs: 10_000 });
      const [seconds, micros] = await client.redis.time();
      // Granted only once the lease had ended (server clock), and well before the wait ran out.
      expect(Number(seconds) * 1000 + Number(micros) / 1000).toBeGreaterThanOrEqual(leaseEnd);
      expect(performance.now() - waitStarted).toBeLessThan(5_000);
      expect(await client.redis.hexists(`${prefix}:{pool}:holders`, crashedId)).toBe(0);
      await permit.release();
    });
  });
});
