import { createServer } from 'node:net';

/**
 * Ports a fleet never hands out, whatever the OS offers: 6379 is the
 * machine's own Redis (tests must never touch it); the others are what the
 * repository's docker-compose.yml publishes: 6380 and 7001–7005 (standalone
 * and Redlock masters), 7101–7106 (the cluster), 7201–7202 and 26380–26382
 * (the sentinel group).
 */
export const RESERVED_PORTS: ReadonlySet<number> = new Set([
  6379, 6380, 7001, 7002, 7003, 7004, 7005, 7101, 7102, 7103, 7104, 7105, 7106, 7201, 7202, 26380, 26381, 26382,
]);

/**
 * A Redis Cluster node also listens on its port + 10000, the cluster bus
 * (https://redis.io/docs/latest/operate/oss_and_stack/management/scaling/#redis-cluster-tcp-ports).
 */
export const CLUSTER_BUS_PORT_OFFSET = 10_000;

const MAX_ATTEMPTS = 20;
/** More tries when a companion port must be free too: the OS may offer ports above 55535. */
const MAX_ATTEMPTS_WITH_COMPANION = 100;

/** Options of {@link findFreePort}. */
export interface FindFreePortOptions {
  /** Address to probe. @default '127.0.0.1' */
  readonly host?: string;
  /** Ports never returned. @default RESERVED_PORTS */
  readonly exclude?: ReadonlySet<number>;
  /**
   * When set, `port + companionOffset` must be free as well (and ≤ 65535, not
   * excluded): {@link CLUSTER_BUS_PORT_OFFSET} for a cluster node's bus port.
   * @default undefined (no companion port)
   */
  readonly companionOffset?: number;
}

/**
 * Asks the OS for a free TCP port (listen on port 0, read the port, close).
 * The port is only free at that moment: whoever binds it next must still
 * handle EADDRINUSE, which the fleet does by trying another port.
 * @throws Error when no acceptable port was found.
 */
export async function findFreePort(options: FindFreePortOptions = {}): Promise<number> {
  const { host = '127.0.0.1', exclude = RESERVED_PORTS, companionOffset } = options;
  const attempts = companionOffset === undefined ? MAX_ATTEMPTS : MAX_ATTEMPTS_WITH_COMPANION;
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    try {
      const port = await listenOnce(host, 0);
      if (exclude.has(port)) continue;
      if (companionOffset === undefined) return port;
      const companion = port + companionOffset;
      if (companion > 65_535 || exclude.has(companion)) continue;
      if ((await listenOnce(host, companion).catch(() => 0)) === companion) return port;
    } catch (error) {
      lastError = error;
    }
  }
  const what = companionOffset === undefined ? 'a free TCP port' : `a free TCP port p with p + ${companionOffset} free too`;
  throw new Error(`could not find ${what} on ${host}`, { cause: lastError });
}

function listenOnce(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port, host, exclusive: true }, () => {
      const address = server.address();
      const bound = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (bound > 0 ? resolve(bound) : reject(new Error('listen returned no port'))));
    });
  });
}
