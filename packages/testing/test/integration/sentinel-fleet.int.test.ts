import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { Redis } from 'ioredis';
import { eventually, RedisSentinelGroup, uniquePrefix, type SentinelGroupNode } from '@org/rlock-testing';

// One group for the whole file (a master, a replica and three Sentinels):
// tests run in order and the failover tests at the end change who is master.

/** Bound on a failover with down-after 1000 ms; it takes about 3–4 s here. */
const FAILOVER_BOUND_MS = 20_000;

/** A direct connection to one process that neither retries nor reconnects. */
function nodeClient(node: Pick<SentinelGroupNode, 'host' | 'port'>): Redis {
  const redis = new Redis({ host: node.host, port: node.port, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  return redis;
}

async function withNode<T>(node: Pick<SentinelGroupNode, 'host' | 'port'>, use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = nodeClient(node);
  try {
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

/** First element of ROLE: 'master', 'slave' or 'sentinel'. */
async function roleOf(node: Pick<SentinelGroupNode, 'host' | 'port'>): Promise<string> {
  return withNode(node, async (redis) => String(((await redis.call('ROLE')) as unknown[])[0]));
}

function tcpRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('RedisSentinelGroup', () => {
  let group: RedisSentinelGroup;
  let startMs = 0;

  beforeAll(async () => {
    const began = performance.now();
    group = await RedisSentinelGroup.start({ replicas: 1, sentinels: 3, masterName: 'mymaster' });
    startMs = performance.now() - began;
  }, 60_000);

  afterAll(async () => {
    await group?.stop();
  });

  describe('start', () => {
    it('starts a master, a replica and three Sentinels on free ports', async () => {
      expect(group.size).toBe(5);
      expect(group.masterName).toBe('mymaster');
      expect(group.nodes().map((node) => node.role)).toEqual(['master', 'replica', 'sentinel', 'sentinel', 'sentinel']);
      const ports = group.nodes().map((node) => node.port);
      expect(new Set(ports).size).toBe(5);
      expect(ports).not.toContain(6379);
      expect(group.sentinels).toEqual(
        group
          .nodes()
          .slice(2)
          .map(({ host, port }) => ({ host, port })),
      );
      expect(await roleOf(group.node(0))).toBe('master');
      expect(await roleOf(group.node(1))).toBe('slave');
      for (const sentinel of group.sentinels) expect(await roleOf(sentinel)).toBe('sentinel');
      // A bound, to notice if start-up slows down; measured under 1 s here.
      expect(startMs).toBeLessThan(30_000);
    });

    it('has every Sentinel monitor the master with the replica and the other Sentinels known', async () => {
      expect(await group.currentMaster()).toEqual({ host: '127.0.0.1', port: group.node(0).port });
      for (const sentinel of group.sentinels) {
        await withNode(sentinel, async (redis) => {
          const master = (await redis.call('SENTINEL', 'MASTER', 'mymaster')) as string[];
          const field = (name: string) => master[master.indexOf(name) + 1];
          expect(field('port')).toBe(String(group.node(0).port));
          expect(field('flags')).toBe('master');
          expect(field('num-slaves')).toBe('1');
          expect(field('num-other-sentinels')).toBe('2');
          expect(field('quorum')).toBe('2');
          expect(field('down-after-milliseconds')).toBe('1000');
          expect(await redis.call('SENTINEL', 'CKQUORUM', 'mymaster')).toMatch(/^OK/);
        });
      }
    });

    it('rejects bad options before starting anything', async () => {
      await expect(RedisSentinelGroup.start({ sentinels: 0 })).rejects.toThrow(RangeError);
      await expect(RedisSentinelGroup.start({ masterName: 'my master' })).rejects.toThrow(/masterName/);
    });
  });

  describe('client', () => {
    it('writes to the master through the Sentinels, and the write reaches the replica', async () => {
      const redis = group.client();
      const key = `${uniquePrefix()}:k`;
      expect(await redis.set(key, 'v')).toBe('OK');
      // Closed now: it would log reconnection errors during the failover tests.
      redis.disconnect();
      expect(await withNode(group.node(0), (direct) => direct.get(key))).toBe('v');
      expect(await withNode(group.node(0), (direct) => direct.wait(1, 2_000))).toBe(1);
      expect(await withNode(group.node(1), (direct) => direct.get(key))).toBe('v');
    });
  });

  describe('Sentinel faults', () => {
    it('pauses a Sentinel until resume', async () => {
      const sentinel = group.node(2);
      const redis = new Redis({ host: sentinel.host, port: sentinel.port, commandTimeout: 200, maxRetriesPerRequest: 0 });
      redis.on('error', () => undefined);
      try {
        await group.pause(sentinel);
        await expect(redis.ping()).rejects.toThrow(/timed out/i);
        await group.resume(sentinel);
        expect(await eventually(async () => (await redis.ping().catch(() => '')) === 'PONG', 5_000)).toBe(true);
      } finally {
        redis.disconnect();
      }
    });

    it('restarts a killed Sentinel, which monitors the same master again', async () => {
      const sentinel = group.node(3);
      await group.kill(sentinel);
      expect(group.isRunning(sentinel)).toBe(false);
      expect(await tcpRefused(sentinel.port)).toBe(true);
      const back = await group.restart(sentinel);
      expect(back).toMatchObject({ port: sentinel.port, role: 'sentinel', running: true });
      const address = await withNode(sentinel, (redis) => redis.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'mymaster'));
      expect(address).toEqual(['127.0.0.1', String(group.node(0).port)]);
    });
  });

  describe('failover', () => {
    const key = `${uniquePrefix()}:failover`;
    let redis: Redis;
    let old: SentinelGroupNode | undefined;
    let promoted: SentinelGroupNode | undefined;

    beforeAll(async () => {
      redis = group.client();
      redis.on('error', () => undefined);
      await redis.set(key, 'before');
    });

    it('names a new master within the bound after the master is killed', async () => {
      const replica = group.node(1);
      expect(await withNode(group.node(0), (direct) => direct.wait(1, 2_000))).toBe(1);

      const began = performance.now();
      old = await group.killMaster();
      expect(old).toMatchObject({ index: 0, role: 'master', running: false });
      expect(await tcpRefused(old.port)).toBe(true);
      promoted = await group.waitForFailover(old, { timeoutMs: FAILOVER_BOUND_MS });
      expect(performance.now() - began).toBeLessThan(FAILOVER_BOUND_MS);

      expect(promoted).toMatchObject({ index: 1, port: replica.port, role: 'master', running: true });
      expect(await group.currentMaster()).toEqual({ host: '127.0.0.1', port: replica.port });
      expect(await roleOf(promoted)).toBe('master');
      expect(group.node(0).role).toBe('replica');
      expect(await withNode(promoted, (direct) => direct.get(key))).toBe('before');
    });

    it('lets the same ioredis Sentinel client write again, to the new master', async () => {
      if (promoted === undefined) throw new Error('needs the failover test before it');
      expect(await eventually(async () => (await redis.set(key, 'after').catch(() => null)) === 'OK', 10_000)).toBe(true);
      expect(await withNode(promoted, (direct) => direct.get(key))).toBe('after');
    });

    it('restarts the old master, which the Sentinels turn into a replica of the new one', async () => {
      if (old === undefined || promoted === undefined) throw new Error('needs the failover test before it');
      const back = await group.restart(old);
      expect(back).toMatchObject({ port: old.port, role: 'replica', running: true });
      expect(await roleOf(back)).toBe('slave');
      await withNode(back, async (direct) => {
        expect(await direct.info('replication')).toMatch(new RegExp(`^master_port:${promoted?.port}\\r?$`, 'm'));
        expect(await direct.get(key)).toBe('after');
      });
    });
  });

  describe('failover of a paused master', () => {
    it('promotes the replica, and the Sentinels make the resumed master its replica', async () => {
      const master = group.nodes().find((node) => node.role === 'master') as SentinelGroupNode;
      const began = performance.now();
      await group.pause(master);
      const promoted = await group.waitForFailover(master, { timeoutMs: FAILOVER_BOUND_MS });
      expect(performance.now() - began).toBeLessThan(FAILOVER_BOUND_MS);
      expect(promoted.port).not.toBe(master.port);
      expect(await group.currentMaster()).toEqual({ host: '127.0.0.1', port: promoted.port });
      await group.resume(master);
      const nodes = await group.waitUntilStable();
      expect(nodes[master.index]?.role).toBe('replica');
      expect(await roleOf(master)).toBe('slave');
    });
  });

  describe('stop', () => {
    it('kills every process, removes the data directories and refuses new work', async () => {
      const nodes = group.nodes();
      const dirs = await Promise.all(
        // Every process runs from a config file in its data directory (Sentinels have no CONFIG GET).
        nodes.map((node) => withNode(node, async (redis) => dirname(/^config_file:(.*?)\r?$/m.exec(await redis.info('server'))?.[1] ?? ''))),
      );
      const client = group.client();
      await client.ping();
      await group.stop();
      expect(group.stop()).toBe(group.stop());
      expect(client.status).toBe('end');
      for (const node of nodes) expect(await tcpRefused(node.port)).toBe(true);
      expect(dirs.every((dir) => dir.startsWith('/'))).toBe(true);
      expect(dirs.some((dir) => existsSync(dir))).toBe(false);
      expect(() => group.client()).toThrow(/stopped/);
      await expect(group.killMaster()).rejects.toThrow(/stopped/);
    });
  });
});
