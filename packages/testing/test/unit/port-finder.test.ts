import { createServer } from 'node:net';
import { CLUSTER_BUS_PORT_OFFSET, findFreePort, RESERVED_PORTS } from '../../src/port-finder.js';

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

describe('findFreePort', () => {
  it('returns a port that is free and not reserved', async () => {
    const port = await findFreePort();
    expect(RESERVED_PORTS.has(port)).toBe(false);
    expect(await canListen(port)).toBe(true);
  });

  it('with a companion offset, returns a port whose cluster bus port is free too', async () => {
    for (let i = 0; i < 5; i += 1) {
      const port = await findFreePort({ companionOffset: CLUSTER_BUS_PORT_OFFSET });
      expect(port).toBeLessThanOrEqual(65_535 - CLUSTER_BUS_PORT_OFFSET);
      expect(await canListen(port + CLUSTER_BUS_PORT_OFFSET)).toBe(true);
    }
  });

  it('reserves 6379 and the ports docker-compose.yml publishes', () => {
    for (const port of [6379, 6380, 7001, 7005, 7101, 7106, 7201, 7202, 26380, 26382]) expect(RESERVED_PORTS.has(port)).toBe(true);
  });
});
