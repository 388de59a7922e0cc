import { createServer, request, type Server } from 'node:http';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { RedisFleet } from '@org/rlock-testing';
import { createClient, taskMiddleware, type RLockClient } from '@org/rlock';

function get(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('@org/rlock', () => {
  let fleet: RedisFleet;
  let client: RLockClient;

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
    client = createClient({ redis: fleet.url(0), keyPrefix: `req${Date.now()}` });
  });
  afterAll(async () => {
    await client.close();
    await fleet.stop();
  });

  describe('taskMiddleware', () => {
    it('runs each request in its own task: Java-style service code reenters per request and requests exclude each other', async () => {
      const lock = client.getLock('account:7');
      let inside = 0;
      let maxInside = 0;
      // A service that takes the lock and calls a nested service taking it again.
      const audit = async () => {
        await lock.lock();
        try {
          return await lock.getHoldCount();
        } finally {
          await lock.unlock();
        }
      };
      const transfer = async () => {
        await lock.lock();
        try {
          inside++;
          maxInside = Math.max(maxInside, inside);
          const nested = await audit();
          await new Promise((resolve) => setTimeout(resolve, 5));
          inside--;
          return nested;
        } finally {
          await lock.unlock();
        }
      };
      const middleware = taskMiddleware();
      const server: Server = createServer((req, res) => {
        middleware(req, res, () => {
          transfer().then(
            (nested) => res.end(String(nested)),
            (error: unknown) => {
              res.statusCode = 500;
              res.end(String(error));
            },
          );
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      try {
        const bodies = await Promise.all(Array.from({ length: 12 }, () => get(port, '/transfer')));
        expect(bodies).toEqual(Array.from({ length: 12 }, () => '2'));
        expect(maxInside).toBe(1);
      } finally {
        server.close();
      }
    });
  });

  describe('module formats', () => {
    it('works from a CommonJS consumer through require()', () => {
      const fixture = fileURLToPath(new URL('./fixtures/cjs-consumer.cjs', import.meta.url));
      const result = spawnSync(process.execPath, [fixture], { env: { ...process.env, REDIS_URL: fleet.url(0) }, encoding: 'utf8', timeout: 30_000 });
      expect(result.stderr).toBe('');
      expect(result.stdout.trim()).toBe('ok true ERR_RLOCK_INVALID_ARGUMENT');
    });

    it('recognises an error of the other build with instanceof, and only as its own class', () => {
      const fixture = fileURLToPath(new URL('./fixtures/dual-package.mjs', import.meta.url));
      const result = spawnSync(process.execPath, [fixture], { encoding: 'utf8', timeout: 30_000 });
      expect(result.stderr).toBe('');
      const checks = JSON.parse(result.stdout) as Record<string, boolean>;
      expect(Object.entries(checks).filter(([, ok]) => !ok)).toEqual([]);
      expect(Object.keys(checks)).toHaveLength(8);
    });
  });
});
