import { Redis, type Cluster } from 'ioredis';
import { createClient, RedisUnavailableError, type RLockClient } from '@org/rlock';
import { FaultProxy, RedisCluster, eventually, uniquePrefix, type ClusterNode } from '@org/rlock-testing';

/**
 * The Cluster rlock makes from `{ cluster: [...] }`: its node connections get the settings a replayed command relies on (no resend of an
 * in-flight command, which may arrive after its op marker expired and count twice), and the Cluster does not send again a command whose
 * node connection closed (ioredis's `retryDelayOnFailover`), after a failover neither. One Cluster for the file; the failover runs last.
 */
describe('the Cluster connections rlock makes', () => {
  let cluster: RedisCluster;
  const clients: RLockClient[] = [];
  const redis: Redis[] = [];

  beforeAll(async () => {
    cluster = await RedisCluster.start({ masters: 3, replicasPerMaster: 1, nodeTimeoutMs: 300 });
  }, 120_000);
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    for (const connection of redis.splice(0)) connection.disconnect();
  });
  afterAll(() => cluster.stop());

  const urls = (nodes: readonly { host: string; port: number }[]): string[] => nodes.map(({ host, port }) => `redis://${host}:${port}`);
  const make = (options: Parameters<typeof createClient>[0]): RLockClient => {
    const client = createClient(options);
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  };
  /** A plain connection to one node (not through the Cluster): what that server holds. */
  const direct = (node: ClusterNode): Redis => {
    const connection = new Redis({ host: node.host, port: node.port, lazyConnect: false });
    connection.on('error', () => undefined);
    redis.push(connection);
    return connection;
  };
  /** A semaphore name whose key the master `node` serves. */
  const nameOn = (keyPrefix: string, node: ClusterNode): string => {
    for (let i = 0; ; i++) if (cluster.masterForKey(`${keyPrefix}:{quota:${i}}`).port === node.port) return `quota:${i}`;
  };
  const keysMatching = async (connection: Redis, pattern: string): Promise<string[]> => {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await connection.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
    return found;
  };

  it('gives every node connection the settings of a connection rlock makes, the user options winning', async () => {
    const client = make({ redis: { cluster: urls(cluster.startupNodes) }, keyPrefix: uniquePrefix() });
    await client.getSemaphore('quota').availablePermits();
    const made = client.redis as Cluster;
    expect(made.options.retryDelayOnFailover).toBe(0);
    // Reconnects paced as a standalone connection's: never more than about a second apart.
    const delays = Array.from({ length: 30 }, (_, i) => made.options.clusterRetryStrategy?.(i + 1, new Error('down')));
    expect(Math.max(...(delays as number[]))).toBeLessThanOrEqual(1_100);
    expect(made.nodes('all').length).toBeGreaterThanOrEqual(3);
    for (const node of made.nodes('all')) {
      expect(node.options).toMatchObject({ autoResendUnfulfilledCommands: false, disconnectTimeout: 200 });
      expect(node.options.connectionName).toContain(`rlock:${client.clientId}:`);
    }

    const tuned = make({ redis: { cluster: urls(cluster.startupNodes), redisOptions: { disconnectTimeout: 500 } }, keyPrefix: uniquePrefix() });
    await tuned.getSemaphore('quota').availablePermits();
    for (const node of (tuned.redis as Cluster).nodes('all')) {
      expect(node.options).toMatchObject({ autoResendUnfulfilledCommands: false, disconnectTimeout: 500 });
    }
  });

  /**
   * Releases that ran on `victim` (reached through `proxy`) while their replies were held back, with their op markers gone (deleted here:
   * what their expiry after commandTimeoutMs does on a slow failover or a long reconnect). Returns the key, the server and the calls,
   * still waiting for their replies.
   */
  async function releasesRunUnanswered(victim: ClusterNode, proxy: FaultProxy, count: number) {
    const keyPrefix = uniquePrefix();
    const others = cluster.startupNodes.filter((node) => node.port !== victim.port);
    // Commands for the victim's slots go through the proxy; the victim is no startup node, so nothing reaches it directly.
    const client = make({
      redis: { cluster: urls(others), natMap: { [`${victim.host}:${victim.port}`]: { host: '127.0.0.1', port: proxy.port } } },
      keyPrefix,
      commandTimeoutMs: 5_000,
    });
    const name = nameOn(keyPrefix, victim);
    const key = `${keyPrefix}:{${name}}`;
    const semaphore = client.getSemaphore(name);
    await semaphore.trySetPermits(1);
    await semaphore.acquire();
    expect(proxy.connections).toBeGreaterThan(0);
    const server = direct(victim);

    proxy.mute();
    const calls = Array.from({ length: count }, () => semaphore.release());
    for (const call of calls) call.catch(() => undefined);
    expect(await eventually(async () => Number(await server.get(key)) === count, 5_000)).toBe(true);
    // A release sent again now would count again.
    const markers = await keysMatching(server, `${key}:op:*`);
    expect(markers.length).toBeGreaterThanOrEqual(count);
    await server.del(...markers);
    return { key, calls, server };
  }

  it('does not send a release again after its node connection closed: the permits it gave back count once', async () => {
    const victim = cluster.masters()[0] as ClusterNode;
    const proxy = await FaultProxy.start({ host: victim.host, port: victim.port });
    try {
      const { key, calls, server } = await releasesRunUnanswered(victim, proxy, 5);
      proxy.reset();
      proxy.heal();
      const outcomes = await Promise.allSettled(calls);
      expect(Number(await server.get(key))).toBe(5);
      // Each call failed at once, typed: it may have run (it did), so it was not sent again.
      for (const outcome of outcomes) expect(outcome.status === 'rejected' && outcome.reason instanceof RedisUnavailableError).toBe(true);
    } finally {
      await proxy.stop();
    }
  });

  it('does not send a release again after its primary was killed and failed over: no permit counted twice', async () => {
    const victim = cluster.masters()[1] as ClusterNode;
    const proxy = await FaultProxy.start({ host: victim.host, port: victim.port });
    try {
      const { key, calls, server } = await releasesRunUnanswered(victim, proxy, 5);
      // The replica has them all (and the markers' deletion) before the primary dies: WAIT counts this connection's write, made after.
      await server.set(`${key}:synced`, '1', 'PX', 60_000);
      expect(await server.wait(1, 5_000)).toBe(1);
      const old = await cluster.killMaster(victim);
      const outcomes = await Promise.allSettled(calls);
      const promoted = await cluster.waitForFailover(old, { timeoutMs: 30_000 });
      expect(Number(await direct(promoted).get(key))).toBe(5);
      for (const outcome of outcomes) expect(outcome.status === 'rejected' && outcome.reason instanceof RedisUnavailableError).toBe(true);
    } finally {
      await proxy.stop();
    }
  }, 60_000);
});
