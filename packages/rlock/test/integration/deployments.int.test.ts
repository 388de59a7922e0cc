import { createClient, LockLostError, RedisUnavailableError, type ClientOptions, type RLockClient } from '@org/rlock';
import type { Cluster, Redis } from 'ioredis';
import { RedisCluster, RedisFleet, RedisSentinelGroup, eventually, takeHoldLeakWarnings, uniquePrefix } from '@org/rlock-testing';
import { parseHold } from '@org/rlock-core/internal';

/**
 * One behaviour suite for every deployment (as node-redis runs its suite
 * against standalone and Cluster): standalone, a Cluster of 3 masters and 3
 * replicas (sharded pub/sub), and a Sentinel group. Each fleet starts once per
 * describe block.
 */
interface Topology {
  readonly name: string;
  start(): Promise<{ redis: ClientOptions['redis']; raw(): Redis | Cluster; stop(): Promise<void> }>;
}

const topologies: Topology[] = [
  {
    name: 'standalone',
    async start() {
      const fleet = await RedisFleet.start({ size: 1 });
      return { redis: fleet.url(0), raw: () => fleet.client(0), stop: () => fleet.stop() };
    },
  },
  {
    name: 'Cluster',
    async start() {
      const cluster = await RedisCluster.start({ masters: 3, replicasPerMaster: 1 });
      return {
        redis: { cluster: cluster.startupNodes.map(({ host, port }) => `redis://${host}:${port}`) },
        raw: () => cluster.client(),
        stop: () => cluster.stop(),
      };
    },
  },
  {
    name: 'Sentinel',
    async start() {
      const group = await RedisSentinelGroup.start({ replicas: 1, sentinels: 3 });
      return { redis: { sentinels: [...group.sentinels], name: group.masterName }, raw: () => group.client(), stop: () => group.stop() };
    },
  },
];

describe.each(topologies)('on $name', (topology) => {
  let deployment: Awaited<ReturnType<Topology['start']>>;
  const clients: RLockClient[] = [];
  const make = (options: Partial<ClientOptions> = {}): RLockClient => {
    const client = createClient({ redis: deployment.redis, keyPrefix: uniquePrefix(), ...options });
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    deployment = await topology.start();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(() => deployment.stop());

  it('excludes two clients, reenters per task, and hands out growing tokens, over names in many slots', async () => {
    const one = make();
    const two = make({ keyPrefix: one.options.keyPrefix });
    const names = Array.from({ length: 12 }, (_, i) => `slot-${i}`);
    for (const name of names) {
      const tokens: string[] = [];
      await one.task(async () => {
        const lock = one.getLock(name);
        await lock.lock({ leaseMs: 10_000 });
        await lock.lock({ leaseMs: 10_000 });
        expect(await lock.getHoldCount()).toBe(2);
        expect(await two.task(() => two.getLock(name).tryLock({ leaseMs: 1_000 }))).toBe(false);
        await lock.unlock();
        await lock.unlock();
      });
      for (let round = 0; round < 2; round++) {
        tokens.push(await two.getLock(name).withLock(async ({ token }) => token, { leaseMs: 5_000 }));
      }
      expect(BigInt(tokens[1] as string) > BigInt(tokens[0] as string)).toBe(true);
    }
  });

  it("wakes a waiter of another client by the release announcement, long before the holder's lease", async () => {
    const holder = make();
    const waiter = make({ keyPrefix: holder.options.keyPrefix });
    const held = await holder.getLock('wake').acquire({ leaseMs: 60_000 });
    const started = performance.now();
    const waiting = waiter.getLock('wake').withLock(async () => performance.now() - started, { leaseMs: 5_000, waitMs: 30_000 });
    // The waiter is subscribed (its first try refused) before the release.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await held.unlock();
    // A lost announcement would cost it a third of the 30 s watchdog lease.
    expect(await waiting).toBeLessThan(3_000);
  });

  it('tells a holder of another client at once, in any slot, that a force-unlock released its lock (reason forced)', async () => {
    const holder = make();
    const admin = make({ keyPrefix: holder.options.keyPrefix });
    const names = Array.from({ length: 6 }, (_, i) => `forced-${i}`);
    const handles = [];
    for (const name of names) handles.push(await holder.getLock(name).acquire({ leaseMs: 60_000 }));
    // Subscribed at the first hold; a Cluster counts a channel's subscribers per node.
    const channel = `${holder.options.keyPrefix}:client:${holder.clientId}`;
    const raw = deployment.raw();
    await raw.ping(); // a Cluster client knows its nodes once connected
    const subscribers = async () => {
      let total = 0;
      for (const node of raw.isCluster ? (raw as Cluster).nodes('all') : [raw as Redis]) {
        total += Number(((await node.pubsub('NUMSUB', channel)) as [string, number])[1]);
      }
      return total;
    };
    expect(await eventually(async () => (await subscribers()) === 1, 5_000)).toBe(true);
    const reasons: string[] = [];
    holder.on('lockLost', (event) => reasons.push(event.reason));
    for (const name of names) expect(await admin.getLock(name).forceUnlock()).toBe(true);
    // A 60 s fixed lease: without the notice nothing would tell the holder before it ran out.
    expect(await eventually(() => reasons.length === names.length, 5_000)).toBe(true);
    expect(reasons).toEqual(names.map(() => 'forced'));
    expect(handles.every((handle) => handle.signal.aborted)).toBe(true);
  });

  it('keeps a watchdog lease alive past several leases', async () => {
    const client = make({ watchdogTimeoutMs: 600 });
    const lost: string[] = [];
    client.on('lockLost', (event) => lost.push(event.reason));
    await client.getLock('renewed').withLock(async ({ signal }) => {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(signal.aborted).toBe(false);
    });
    expect(lost).toEqual([]);
  });

  it('serves a fair lock in arrival order and shares a read lock', async () => {
    const holder = make();
    const others = [make({ keyPrefix: holder.options.keyPrefix }), make({ keyPrefix: holder.options.keyPrefix })];
    const held = await holder.getFairLock('fair').acquire({ leaseMs: 30_000 });
    const order: number[] = [];
    const waiting: Promise<void>[] = [];
    const raw = deployment.raw();
    for (const [index, client] of others.entries()) {
      waiting.push(client.getFairLock('fair').withLock(async () => void order.push(index), { leaseMs: 5_000, waitMs: 20_000 }));
      // Arrived: its first try joined the queue.
      expect(await eventually(async () => (await raw.llen(`${holder.options.keyPrefix}:{fair}:queue`)) === index + 1, 5_000)).toBe(true);
    }
    await held.unlock();
    await Promise.all(waiting);
    expect(order).toEqual([0, 1]);
    const reads = await Promise.all(others.map((client) => client.getReadWriteLock('doc').readLock().acquire({ leaseMs: 5_000 })));
    expect(await holder.task(() => holder.getReadWriteLock('doc').writeLock().tryLock({ leaseMs: 1_000 }))).toBe(false);
    await Promise.all(reads.map((read) => read.unlock()));
  });

  it('counts semaphore permits across clients, returns a lapsed expirable permit, and opens a latch for another client', async () => {
    const one = make();
    const two = make({ keyPrefix: one.options.keyPrefix });
    // Semaphore: no more permits than set, across clients; a release wakes the other client's waiter.
    expect(await one.getSemaphore('pool').trySetPermits(2)).toBe(true);
    await one.getSemaphore('pool').acquire(2);
    expect(await two.getSemaphore('pool').tryAcquire(1)).toBe(false);
    const started = performance.now();
    const waiting = two
      .getSemaphore('pool')
      .acquire(1, { waitMs: 30_000 })
      .then(() => performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 200)); // refused once and subscribed
    await one.getSemaphore('pool').release(1);
    // A lost announcement would cost it a third of the 30 s watchdog lease.
    expect(await waiting).toBeLessThan(3_000);
    expect(await one.getSemaphore('pool').availablePermits()).toBe(0);
    await one.getSemaphore('pool').release(1);
    await two.getSemaphore('pool').release(1);
    expect(await two.getSemaphore('pool').availablePermits()).toBe(2);

    // Expirable permit: a holder that never releases loses it at its lease, and the permit comes back.
    expect(await one.getPermitExpirableSemaphore('gpu').trySetPermits(1)).toBe(true);
    const lapsing = await one.getPermitExpirableSemaphore('gpu').acquire({ leaseMs: 300 });
    const { signal } = lapsing;
    expect(await two.getPermitExpirableSemaphore('gpu').tryAcquire({ leaseMs: 1_000 })).toBeUndefined();
    const next = await two.getPermitExpirableSemaphore('gpu').acquire({ leaseMs: 5_000, waitMs: 10_000 });
    expect(signal.aborted).toBe(true);
    await next.release();

    // Latch: the other client's awaiter wakes when the count reaches zero.
    expect(await one.getCountDownLatch('jobs').trySetCount(2)).toBe(true);
    const opened = two.getCountDownLatch('jobs').await({ waitMs: 10_000 });
    expect(await one.getCountDownLatch('jobs').countDown()).toBe(1);
    expect(await one.getCountDownLatch('jobs').countDown()).toBe(0);
    expect(await opened).toBe(true);
  });

  if (topology.name !== 'standalone') {
    it('refuses an acquire that too few replicas acknowledged (syncReplicas), leaving nothing behind', async () => {
      const client = make({ syncReplicas: { replicas: 5, timeoutMs: 100 } });
      const error = await client.task(() => client.getLock('sync').tryLock({ leaseMs: 5_000 })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RedisUnavailableError);
      expect((error as Error).message).toMatch(/replicas acknowledged/);
      const plain = make({ keyPrefix: client.options.keyPrefix });
      expect(await eventually(async () => !(await plain.getLock('sync').isLocked()), 2_000)).toBe(true);
      const synced = make({ keyPrefix: client.options.keyPrefix, syncReplicas: { replicas: 1, timeoutMs: 1_000 } });
      expect(await synced.task(() => synced.getLock('sync').tryLock({ leaseMs: 5_000 }))).toBe(true);
      expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['sync']);
      // The semaphore and the latch wait for the replica the same way, and go on when it has the write.
      expect(await synced.getSemaphore('sync-pool').trySetPermits(1)).toBe(true);
      expect(await synced.getSemaphore('sync-pool').tryAcquire(1)).toBe(true);
      await expect(client.getSemaphore('sync-pool').tryAcquire(1)).resolves.toBe(false);
      expect(await synced.getCountDownLatch('sync-latch').trySetCount(1)).toBe(true);
      expect(await synced.getCountDownLatch('sync-latch').countDown()).toBe(0);
    });
  }
});

describe('failovers', () => {
  it("on a Cluster: a held lock's master killed; the holder keeps it or is told; new locks and a blocked waiter are served", async () => {
    const cluster = await RedisCluster.start({ masters: 3, replicasPerMaster: 1 });
    const redis = { cluster: cluster.startupNodes.map(({ host, port }) => `redis://${host}:${port}`) };
    const holder = createClient({ redis, keyPrefix: uniquePrefix(), watchdogTimeoutMs: 1_500 });
    // The waiter rides out the failover: it tries again while Redis is
    // unavailable for less than its commandTimeoutMs (5 s by default).
    const waiter = createClient({ redis, keyPrefix: holder.options.keyPrefix });
    for (const client of [holder, waiter]) client.on('error', () => undefined);
    try {
      const key = `${holder.options.keyPrefix}:{moving}`;
      const held = await holder.getLock('moving').acquire(); // watchdog lease
      const waiting = waiter.getLock('moving').withLock(async () => 'served', { leaseMs: 5_000, waitMs: 30_000 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const master = cluster.masterForKey(key);
      await cluster.killMaster(master);
      await cluster.waitForFailover(master);
      // Never silently both: either the hold is still on the new master with
      // its token, or the holder's signal aborted.
      const check = cluster.client();
      expect(
        await eventually(async () => {
          const token = parseHold(await check.hgetall(key).catch(() => null))?.token;
          return held.signal.aborted || token === held.token;
        }, 10_000),
      ).toBe(true);
      if (held.signal.aborted) expect(held.signal.reason).toBeInstanceOf(LockLostError);
      else await held.unlock();
      expect(await waiting).toBe('served');
      // A new lock on that slot, within a bound.
      const fresh = createClient({ redis, keyPrefix: holder.options.keyPrefix });
      fresh.on('error', () => undefined);
      expect(await fresh.task(() => fresh.getLock('moving').tryLock({ leaseMs: 1_000, waitMs: 10_000 }))).toBe(true);
      expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['moving']);
      await fresh.close();
    } finally {
      await Promise.all([holder.close(), waiter.close()]);
      await cluster.stop();
    }
  });

  it('on Sentinel: the master killed; the holder keeps it or is told; a waiter blocked across the failover is served', async () => {
    const group = await RedisSentinelGroup.start({ replicas: 1, sentinels: 3 });
    const redis = { sentinels: [...group.sentinels], name: group.masterName };
    const holder = createClient({ redis, keyPrefix: uniquePrefix(), watchdogTimeoutMs: 1_500 });
    const waiter = createClient({ redis, keyPrefix: holder.options.keyPrefix });
    for (const client of [holder, waiter]) client.on('error', () => undefined);
    try {
      const key = `${holder.options.keyPrefix}:{failover}`;
      const held = await holder.getLock('failover').acquire();
      const waiting = waiter.getLock('failover').withLock(async () => 'served', { leaseMs: 5_000, waitMs: 30_000 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await group.killMaster();
      await group.waitForFailover();
      const check = group.client();
      expect(
        await eventually(async () => {
          const token = parseHold(await check.hgetall(key).catch(() => null))?.token;
          return held.signal.aborted || token === held.token;
        }, 10_000),
      ).toBe(true);
      if (!held.signal.aborted) await held.unlock();
      expect(await waiting).toBe('served');
    } finally {
      await Promise.all([holder.close(), waiter.close()]);
      await group.stop();
    }
  });
});
