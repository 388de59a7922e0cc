// @ts-check
/**
 * Where the demo runs, from the environment (none: its own redis-server):
 *
 *   REDIS_URL=redis://host:port                            one server
 *   REDIS_CLUSTER=host:port,host:port,…                    a Redis Cluster (≥ 7.0)
 *   REDIS_SENTINELS=host:port,… [REDIS_SENTINEL_NAME=…]    a Sentinel group (default name mymaster)
 *
 * `docker compose --profile cluster up -d` and `--profile sentinel` start such
 * topologies (see docker-compose.yml).
 */
import { Cluster, Redis } from 'ioredis';

/** @param {string} list */
const hostPorts = (list) =>
  list.split(',').map((entry) => {
    const [host, port] = entry
      .trim()
      .replace(/^rediss?:\/\//, '')
      .split(':');
    return { host: host || '127.0.0.1', port: Number(port || 6379) };
  });

/**
 * @typedef {object} Target
 * @property {string} label how the demo says where it runs
 * @property {unknown} rlock what createClient takes as `redis`
 * @property {() => Redis | Cluster} connect a connection for the shop's own data
 * @property {(connection: Redis | Cluster) => (Redis)[]} scanNodes the servers to SCAN when cleaning up
 */

/** @param {string | undefined} ownUrl the url of the demo's own server, when it started one @returns {Target | undefined} */
export function targetFromEnv(ownUrl) {
  const { REDIS_URL, REDIS_CLUSTER, REDIS_SENTINELS, REDIS_SENTINEL_NAME } = process.env;
  if (REDIS_CLUSTER) {
    const nodes = hostPorts(REDIS_CLUSTER);
    return {
      label: `Cluster ${REDIS_CLUSTER} (REDIS_CLUSTER)`,
      rlock: { cluster: nodes.map(({ host, port }) => `redis://${host}:${port}`) },
      connect: () => new Cluster(nodes),
      scanNodes: (connection) => /** @type {Cluster} */ (connection).nodes('master'),
    };
  }
  if (REDIS_SENTINELS) {
    const sentinels = hostPorts(REDIS_SENTINELS);
    const name = REDIS_SENTINEL_NAME || 'mymaster';
    return {
      label: `Sentinel group ${REDIS_SENTINELS}, master "${name}" (REDIS_SENTINELS)`,
      rlock: { sentinels, name },
      connect: () => new Redis({ sentinels, name }),
      scanNodes: (connection) => [/** @type {Redis} */ (connection)],
    };
  }
  const url = REDIS_URL || ownUrl;
  if (!url) return undefined;
  return {
    label: REDIS_URL ? `${url} (REDIS_URL)` : `${url} (own RedisFleet)`,
    rlock: url,
    connect: () => new Redis(url),
    scanNodes: (connection) => [/** @type {Redis} */ (connection)],
  };
}

/** True when the environment names a server or topology (the demo then starts none). */
export const externalTarget = () => Boolean(process.env.REDIS_URL || process.env.REDIS_CLUSTER || process.env.REDIS_SENTINELS);
