import { InvalidArgumentError } from '../../src/errors.js';
import { connectionEndpoint, distinctEndpoints, redisUrlOf, resolveConnection } from '../../src/connection/endpoints.js';
import { createDeployment } from '../../src/connection/create-deployment.js';

describe('connection endpoints', () => {
  describe('a string input', () => {
    it.each([
      ['127.0.0.1:6379', 'redis://127.0.0.1:6379', '127.0.0.1:6379/0'],
      ['localhost:6379', 'redis://localhost:6379', '127.0.0.1:6379/0'],
      ['[::1]:6379', 'redis://[::1]:6379', '127.0.0.1:6379/0'],
      ['redis.internal:7000', 'redis://redis.internal:7000', 'redis.internal:7000/0'],
      ['redis://127.0.0.1:6379/2', 'redis://127.0.0.1:6379/2', '127.0.0.1:6379/2'],
      ['rediss://cache.example:6380', 'rediss://cache.example:6380', 'cache.example:6380/0'],
    ])('takes %s as the server %s', (input, url, identity) => {
      expect(redisUrlOf(input)).toBe(url);
      expect(connectionEndpoint(input).identity).toBe(identity);
    });

    it('counts host:port and the URL of the same server as one server', () => {
      expect(() => distinctEndpoints(['127.0.0.1:7001', 'redis://localhost:7001'], 'masters', 'master')).toThrow(
        /masters\[1\] \(redis:\/\/localhost:7001\) is the same server as masters\[0\]/,
      );
      expect(distinctEndpoints(['127.0.0.1:7001', '[::1]:7002', 'localhost:7003'], 'masters', 'master').map((m) => m.name)).toEqual([
        'redis://127.0.0.1:7001',
        'redis://[::1]:7002',
        'redis://localhost:7003',
      ]);
    });

    it('refuses a bare host with InvalidArgumentError that says it lacks its port', () => {
      for (const input of ['localhost', '127.0.0.1', 'redis']) {
        expect(redisUrlOf(input)).toBeUndefined();
        expect(() => connectionEndpoint(input)).toThrow(InvalidArgumentError);
        expect(() => connectionEndpoint(input)).toThrow(`a host needs its port, e.g. "${input}:6379"`);
      }
    });

    it.each(['http://127.0.0.1:6379', '127.0.0.1:0', '127.0.0.1:65536', ':6379', 'user@host:6379', 'a b:1', '::1:6379', '', '127.0.0.1:6379/2'])(
      'refuses %j with InvalidArgumentError naming what it takes',
      (input) => {
        expect(redisUrlOf(input)).toBeUndefined();
        expect(() => connectionEndpoint(input)).toThrow(/^redis must be a redis:\/\/ or rediss:\/\/ URL, host:port, ioredis options/);
      },
    );

    it.each([
      ['127.0.0.1:1', '127.0.0.1'],
      ['localhost:1', 'localhost'],
      ['[::1]:1', '::1'],
    ])('connects to %s as host %s, port 1', (input, host) => {
      const { redis, owned } = resolveConnection(input);
      try {
        expect(owned).toBe(true);
        expect(redis.options).toMatchObject({ host, port: 1 });
      } finally {
        redis.disconnect();
      }
    });
  });

  describe('a Cluster input', () => {
    it('takes host:port startup nodes as it takes URLs', async () => {
      const deployment = createDeployment(
        { cluster: ['127.0.0.1:1', '[::1]:2', 'redis://localhost:3'], lazyConnect: true },
        { commandTimeoutMs: 1_000, scripts: [] },
      );
      try {
        // ioredis keeps the startup nodes it was given (a private field): lazyConnect leaves them untried.
        const { startupNodes } = deployment.redis as unknown as { startupNodes: unknown };
        expect(startupNodes).toEqual([
          { host: '127.0.0.1', port: 1 },
          { host: '::1', port: 2 },
          { host: 'localhost', port: 3 },
        ]);
      } finally {
        await deployment.close(performance.now() + 1_000);
      }
    });

    it('refuses a bare host among the startup nodes', () => {
      expect(() => createDeployment({ cluster: ['127.0.0.1'] }, { commandTimeoutMs: 1_000, scripts: [] })).toThrow(
        /redis\.cluster: "127\.0\.0\.1" is not a redis:\/\/ or rediss:\/\/ URL or host:port/,
      );
    });
  });
});
