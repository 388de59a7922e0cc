import { createServer, type Server } from 'node:net';
import { RedisFleet } from '@org/rlock-testing';
import { RedisCommandError, RedisUnavailableError, RLockClient } from '@org/rlock-core';
import { ClientPool } from './support.js';

describe('RLock against a failing Redis', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  it('fails with RedisUnavailableError within commandTimeoutMs when nothing listens', async () => {
    const dead = await new Promise<number>((resolve) => {
      const server: Server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const client = new RLockClient({
      redis: { host: '127.0.0.1', port: dead, retryStrategy: () => 50, lazyConnect: false },
      commandTimeoutMs: 300,
      keyPrefix: 'unreachable',
    });
    try {
      const started = performance.now();
      const error = await client.task(() => client.getLock('x').lock({ leaseMs: 1_000 })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RedisUnavailableError);
      expect(performance.now() - started).toBeLessThan(3_000);
    } finally {
      await client.close();
    }
  });

  it('fails a waiting lock() with RedisUnavailableError when Redis stops answering', async () => {
    const client = pool.make(fleet.url(0), { commandTimeoutMs: 300, watchdogTimeoutMs: 1_500 });
    const holder = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
    await holder.getLock('paused').acquire({ leaseMs: 60_000 });
    const waiting = client.task(() => client.getLock('paused').lock({ leaseMs: 1_000 }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await fleet.pause(0);
    try {
      const started = performance.now();
      const error = await waiting.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RedisUnavailableError);
      // It sleeps at most watchdogTimeoutMs / 3 (500 ms), then its try times out (300 ms).
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      await fleet.resume(0);
    }
  });

  it('wraps WRONGTYPE at the lock key into RedisCommandError naming the key, and changes nothing', async () => {
    const client = pool.make(fleet.url(0));
    const key = `${client.options.keyPrefix}:{wrong}`;
    await fleet.client(0).set(key, 'a string');
    const error = await client.task(() => client.getLock('wrong').lock({ leaseMs: 1_000 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisCommandError);
    expect((error as Error).message).toContain(key);
    expect(await fleet.client(0).get(key)).toBe('a string');
  });

  it('keeps working across SCRIPT FLUSH between calls', async () => {
    const client = pool.make(fleet.url(0));
    const lock = client.getLock('flush');
    await client.task(async () => {
      await lock.lock({ leaseMs: 5_000 });
      await fleet.client(0).script('FLUSH');
      await lock.lock({ leaseMs: 5_000 });
      await fleet.client(0).script('FLUSH');
      await lock.unlock();
      await lock.unlock();
    });
    expect(await lock.isLocked()).toBe(false);
  });

  it('refuses a connection with its own keyPrefix', () => {
    expect(() => new RLockClient({ redis: { keyPrefix: 'app:' } })).toThrow(/keyPrefix/);
  });
});
