import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { Redis } from 'ioredis';
import { eventually, keySlot, RedisCluster, uniquePrefix, type ClusterNode } from '@org/rlock-testing';

// One cluster for the whole file (starting one takes seconds): tests run in
// order and the fault tests at the end change its topology on purpose.

/** Bound on a failover with the default 1000 ms node timeout; it takes about 2–3 s here. */
const FAILOVER_BOUND_MS = 15_000;

/** A direct connection to one node that neither retries nor follows redirections. */
function nodeClient(node: Pick<ClusterNode, 'host' | 'port'>): Redis {
  const redis = new Redis({ host: node.host, port: node.port, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  return redis;
}

/** Runs `use` with a direct connection to `node`, closed afterwards. */
async function withNode<T>(node: Pick<ClusterNode, 'host' | 'port'>, use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = nodeClient(node);
  try {
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

/** A key of `prefix` whose slot the master `master` serves. */
function keyServedBy(cluster: RedisCluster, master: ClusterNode, prefix: string): string {
  for (let i = 0; ; i += 1) {
    const key = `${prefix}:${i}`;
    if (cluster.masterForKey(key).port === master.port) return key;
  }
}

/** Pids of the redis-server supervisors this process started (one per running node). */
function supervisorsOfThisProcess(): string[] {
  try {
    return execFileSync('pgrep', ['-P', String(process.pid), '-f', 'rlock-fleet-supervisor'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .sort();
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
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

describe('RedisCluster', () => {
  let cluster: RedisCluster;
  let startMs = 0;

  beforeAll(async () => {
    const began = performance.now();
    cluster = await RedisCluster.start({ masters: 3, replicasPerMaster: 1 });
    startMs = performance.now() - began;
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  describe('start', () => {
    it('starts three masters and three replicas on free ports whose bus ports fit', () => {
      const nodes = cluster.nodes();
      expect(nodes).toHaveLength(6);
      expect(cluster.size).toBe(6);
      expect(cluster.masters()).toHaveLength(3);
      expect(cluster.replicas()).toHaveLength(3);
      const ports = nodes.map((node) => node.port);
      expect(new Set(ports).size).toBe(6);
      expect(ports).not.toContain(6379);
      for (const port of ports) expect(port + 10_000).toBeLessThanOrEqual(65_535);
      expect(cluster.startupNodes).toEqual(nodes.map(({ host, port }) => ({ host, port })));
      expect(nodes.every((node) => node.running && /^[0-9a-f]{40}$/.test(node.id))).toBe(true);
      // A bound, to notice if start-up slows down; measured about 2.5 s here.
      expect(startMs).toBeLessThan(30_000);
    });

    it('reaches cluster_state:ok on every node, with each replica synced to a master', async () => {
      const masterIds = new Set(cluster.masters().map((master) => master.id));
      for (const node of cluster.nodes()) {
        await withNode(node, async (redis) => {
          expect(await redis.cluster('INFO')).toMatch(/^cluster_state:ok\r?$/m);
          const replication = await redis.info('replication');
          if (node.role === 'replica') {
            expect(masterIds.has(node.masterId as string)).toBe(true);
            expect(replication).toMatch(/^master_link_status:up\r?$/m);
          } else {
            expect(replication).toMatch(/^connected_slaves:1\r?$/m);
          }
        });
      }
    });

    it('splits all 16384 slots between the masters, masters()[0] serving slot 0', () => {
      const covered = cluster
        .masters()
        .flatMap((master) => master.slots)
        .reduce((sum, [first, last]) => sum + (last - first + 1), 0);
      expect(covered).toBe(16_384);
      expect(cluster.masterForSlot(0).port).toBe(cluster.masters()[0]?.port);
      expect(cluster.masterForSlot(16_383).port).toBe(cluster.masters()[2]?.port);
      expect(() => cluster.masterForSlot(16_384)).toThrow(RangeError);
    });

    it('rejects bad options before starting anything', async () => {
      await expect(RedisCluster.start({ masters: 2 })).rejects.toThrow(RangeError);
      await expect(RedisCluster.start({ redisCliPath: '' })).rejects.toThrow(/redisCliPath/);
    });

    it('names REDIS_CLI when redis-cli cannot be run, and tears down the nodes it started', async () => {
      const before = supervisorsOfThisProcess();
      expect(before).toHaveLength(cluster.size); // the shared cluster's, and no others
      await expect(RedisCluster.start({ redisCliPath: '/nonexistent/redis-cli' })).rejects.toThrow(/REDIS_CLI/);
      expect(supervisorsOfThisProcess()).toEqual(before);
    });
  });

  describe('client', () => {
    it('stores keys on all three masters through the ioredis Cluster', async () => {
      const redis = cluster.client();
      const prefix = uniquePrefix();
      for (const master of cluster.masters()) {
        const key = keyServedBy(cluster, master, prefix);
        expect(await redis.set(key, master.id)).toBe('OK');
        // The key is on that master itself, not merely reachable through redirects.
        expect(await withNode(master, (direct) => direct.get(key))).toBe(master.id);
      }
      // Closed now: it would log reconnection errors during the failover tests.
      redis.disconnect();
    });
  });

  describe('masterForKey', () => {
    it('names the node that CLUSTER KEYSLOT and the cluster itself route the key to', async () => {
      const prefix = uniquePrefix();
      for (const key of [`${prefix}:a`, `{${prefix}}:lock`, `${prefix}:{tag}:x`]) {
        const master = cluster.masterForKey(key);
        await withNode(master, async (redis) => {
          expect(await redis.cluster('KEYSLOT', key)).toBe(keySlot(key));
          await expect(redis.set(key, '1')).resolves.toBe('OK');
        });
        const other = cluster.masters().find((node) => node.port !== master.port) as ClusterNode;
        await withNode(other, async (redis) => {
          await expect(redis.set(key, '1')).rejects.toThrow(new RegExp(`^MOVED ${keySlot(key)} 127\\.0\\.0\\.1:${master.port}$`));
        });
      }
    });
  });

  describe('sharded pub/sub', () => {
    it('delivers an SPUBLISH through the Cluster client to an SSUBSCRIBE on the node serving the channel', async () => {
      const channel = `${uniquePrefix()}:events`;
      const subscriber = nodeClient(cluster.masterForKey(channel));
      try {
        const received = new Promise<[string, string]>((resolve) => {
          subscriber.on('smessage', (from: string, message: string) => resolve([from, message]));
        });
        await subscriber.ssubscribe(channel);
        const publisher = cluster.client();
        expect(await publisher.spublish(channel, 'hello')).toBe(1);
        publisher.disconnect();
        await expect(received).resolves.toEqual([channel, 'hello']);
      } finally {
        subscriber.disconnect();
      }
    });
  });

  describe('pause', () => {
    it('freezes a replica until resume, without the cluster failing it over', async () => {
      const replica = cluster.replicas()[0] as ClusterNode;
      const redis = new Redis({ host: replica.host, port: replica.port, commandTimeout: 200, maxRetriesPerRequest: 0 });
      redis.on('error', () => undefined);
      try {
        expect(await redis.ping()).toBe('PONG');
        await cluster.pause(replica);
        expect(cluster.isRunning(replica)).toBe(true);
        await expect(redis.ping()).rejects.toThrow(/timed out/i);
        await cluster.resume(replica);
        expect(await eventually(async () => (await redis.ping().catch(() => '')) === 'PONG', 5_000)).toBe(true);
      } finally {
        redis.disconnect();
      }
    });
  });

  describe('failover', () => {
    const prefix = uniquePrefix();
    let key = '';
    let old: ClusterNode | undefined;
    let promoted: ClusterNode | undefined;

    it('promotes a replica of a killed master within the bound, keeping acknowledged writes', async () => {
      const redis = cluster.client();
      redis.on('error', () => undefined);
      const target = cluster.masters()[1] as ClusterNode;
      key = keyServedBy(cluster, target, prefix);
      await redis.set(key, 'before');
      // WAIT: the write reached the replica before the crash.
      expect(await withNode(target, (direct) => direct.wait(1, 2_000))).toBe(1);
      const replicaIds = cluster
        .replicas()
        .filter((node) => node.masterId === target.id)
        .map((node) => node.id);

      const began = performance.now();
      old = await cluster.killMaster(target);
      expect(old.running).toBe(false);
      expect(await tcpRefused(old.port)).toBe(true);
      promoted = await cluster.waitForFailover(old, { timeoutMs: FAILOVER_BOUND_MS });
      expect(performance.now() - began).toBeLessThan(FAILOVER_BOUND_MS);

      expect(replicaIds).toContain(promoted.id);
      expect(promoted.role).toBe('master');
      expect(cluster.masterForKey(key).port).toBe(promoted.port);
      expect(cluster.masters()).toHaveLength(3);
      await withNode(promoted, async (direct) => {
        expect(await direct.get(key)).toBe('before');
        expect(await direct.cluster('INFO')).toMatch(/^cluster_state:ok\r?$/m);
      });
      // The Cluster client follows the new slot owner.
      expect(await eventually(async () => (await redis.set(key, 'after').catch(() => null)) === 'OK', 10_000)).toBe(true);
      expect(await withNode(promoted, (direct) => direct.get(key))).toBe('after');
    });

    it('restarts the killed master, which rejoins as a replica of the promoted node', async () => {
      if (old === undefined || promoted === undefined) throw new Error('needs the failover test before it');
      const back = await cluster.restart(old);
      expect(back.port).toBe(old.port);
      expect(back.id).toBe(old.id);
      expect(back.running).toBe(true);
      expect(back.role).toBe('replica');
      expect(back.masterId).toBe(promoted.id);
      await withNode(back, async (direct) => {
        expect(await direct.info('replication')).toMatch(new RegExp(`^master_port:${promoted?.port}\\r?$`, 'm'));
        await direct.readonly();
        expect(await direct.get(key)).toBe('after');
      });
      for (const node of cluster.nodes()) {
        await withNode(node, async (direct) => expect(await direct.cluster('INFO')).toMatch(/^cluster_state:ok\r?$/m));
      }
    });

    it('fails over a paused master too, which rejoins as a replica once resumed', async () => {
      const target = cluster.masters()[2] as ClusterNode;
      const began = performance.now();
      await cluster.pause(target);
      const promotedFromPause = await cluster.waitForFailover(target, { timeoutMs: FAILOVER_BOUND_MS });
      expect(performance.now() - began).toBeLessThan(FAILOVER_BOUND_MS);
      expect(promotedFromPause.masterId).toBeUndefined();
      expect(cluster.node(target.index).running).toBe(true);
      await cluster.resume(target);
      const nodes = await cluster.waitUntilStable();
      expect(nodes[target.index]).toMatchObject({ role: 'replica', masterId: promotedFromPause.id });
      expect(cluster.masters()).toHaveLength(3);
    });

    it('rejects waiting for a failover of a node that serves no slots', async () => {
      await expect(cluster.waitForFailover(cluster.replicas()[0] as ClusterNode)).rejects.toThrow(/not a master/);
    });
  });

  describe('stop', () => {
    it('kills every node, removes the data directories and refuses new work', async () => {
      const nodes = cluster.nodes();
      const dirs = await Promise.all(nodes.map((node) => withNode(node, async (redis) => ((await redis.config('GET', 'dir')) as [string, string])[1])));
      const client = cluster.client();
      let ended = false;
      client.once('end', () => (ended = true));
      await client.ping();
      await cluster.stop();
      expect(cluster.stop()).toBe(cluster.stop());
      // ioredis 6's Cluster emits 'close' once more after 'end': the event is what counts.
      expect(ended).toBe(true);
      for (const node of nodes) expect(await tcpRefused(node.port)).toBe(true);
      expect(dirs.some((dir) => existsSync(dir))).toBe(false);
      expect(() => cluster.client()).toThrow(/stopped/);
      await expect(cluster.killMaster(0)).rejects.toThrow(/stopped/);
    });
  });
});
