import { createServer } from 'node:net';

/**
 * Ports a fleet never hands out, whatever the OS offers: 6379 is the
 * machine's own Redis (tests must never touch it), 6380 and 7001–7005 are
 * what the repository's docker-compose.yml publishes.
 */
export const RESERVED_PORTS: ReadonlySet<number> = new Set([6379, 6380, 7001, 7002, 7003, 7004, 7005]);

const MAX_ATTEMPTS = 20;

/**
 * Asks the OS for a free TCP port on `host` (listen on port 0, read the port,
 * close). The port is only free at that moment: whoever binds it next must
 * still handle EADDRINUSE, which the fleet does by trying another port.
 * @throws Error when no acceptable port was found in 20 attempts.
 */
export async function findFreePort(host = '127.0.0.1', exclude: ReadonlySet<number> = RESERVED_PORTS): Promise<number> {
  let lastError: unknown;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    try {
      const port = await listenOnce(host);
      if (!exclude.has(port)) return port;
    } catch (error) {
      lastError = error;
    }
  }
  throw new Error(`could not find a free TCP port on ${host}`, { cause: lastError });
}

function listenOnce(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('listen(0) returned no port'))));
    });
  });
}
