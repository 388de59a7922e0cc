import { createServer, type Server } from 'node:net';
import {
  ClientClosedError,
  IllegalMonitorStateError,
  LockAcquireTimeoutError,
  LockLostError,
  RedisUnavailableError,
  createClient,
  type ClientOptions,
  type RLockClient,
} from '@org/rlock';
import { RedisFleet, eventually, uniquePrefix } from '@org/rlock-testing';

/** What a new user trips on, tried as one would: each test failed before its fix. */
describe('what a new user trips on', () => {
  let fleet: RedisFleet;
  const clients: RLockClient[] = [];
  const make = (options: Partial<ClientOptions> = {}): RLockClient => {
    const client = createClient({ redis: fleet.url(0), keyPrefix: uniquePrefix(), ...options });
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(() => fleet.stop());

  describe('a dead Redis', () => {
    const freePort = (): Promise<number> =>
      new Promise<number>((resolve) => {
        const server: Server = createServer();
        server.listen(0, '127.0.0.1', () => {
          const { port: free } = server.address() as { port: number };
          server.close(() => resolve(free));
        });
      });

    it('fails tryLock at once with the refused connection as cause, and closes at once', async () => {
      const port = await freePort();
      const client = createClient({ redis: `redis://127.0.0.1:${port}`, keyPrefix: uniquePrefix() });
      client.on('error', () => undefined);
      const started = performance.now();
      const error = await client.task(() => client.getLock('x').tryLock({ leaseMs: 1_000 })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RedisUnavailableError);
      expect(((error as Error).cause as { code?: string }).code).toBe('ECONNREFUSED');
      expect(performance.now() - started).toBeLessThan(1_000); // commandTimeoutMs is 5 000
      const closing = performance.now();
      await client.close();
      expect(performance.now() - closing).toBeLessThan(1_000);
    });

    it('fails the calls that wait (lock, withLock, a semaphore acquire) at once too: their SUBSCRIBE is refused like a command', async () => {
      const port = await freePort();
      const client = createClient({ redis: `redis://127.0.0.1:${port}`, keyPrefix: uniquePrefix() });
      client.on('error', () => undefined);
      clients.push(client);
      const calls: [string, () => Promise<unknown>][] = [
        ['lock()', () => client.task(() => client.getLock('x').lock({ leaseMs: 1_000 }))],
        ['withLock()', () => client.getLock('y').withLock(() => undefined)],
        ['acquire()', () => client.getSemaphore('s').acquire()],
      ];
      for (const [call, run] of calls) {
        const started = performance.now();
        const error = await run().catch((e: unknown) => e);
        expect([call, error]).toEqual([call, expect.any(RedisUnavailableError)]);
        expect([call, ((error as Error).cause as { code?: string }).code]).toEqual([call, 'ECONNREFUSED']);
        expect(performance.now() - started).toBeLessThan(1_000); // commandTimeoutMs is 5 000
      }
    });
  });

  describe('waitMs while Redis hangs', () => {
    it('settles lock({ waitMs }) by waitMs with LockAcquireTimeoutError whose cause says Redis did not answer', async () => {
      const client = make(); // commandTimeoutMs 5 000
      const holder = make({ keyPrefix: client.options.keyPrefix });
      await holder.getLock('hang').acquire({ leaseMs: 30_000 });
      await client.task(async () => {
        await client.getLock('warm').lock({ leaseMs: 1_000 });
        await fleet.pause(0);
        try {
          const started = performance.now();
          const error = await client.getLock('hang').lock({ waitMs: 1_000, leaseMs: 5_000 }).catch((e: unknown) => e);
          const elapsed = performance.now() - started;
          expect(error).toBeInstanceOf(LockAcquireTimeoutError);
          expect((error as Error).cause).toBeInstanceOf(RedisUnavailableError);
          expect(elapsed).toBeGreaterThanOrEqual(990);
          expect(elapsed).toBeLessThan(2_500);
        } finally {
          await fleet.resume(0);
        }
      });
    });
  });

  describe('one holder per process', () => {
    it('marks a hold lost as soon as a restart empties Redis, before another task of the client is granted the lock', async () => {
      const client = make({ watchdogTimeoutMs: 3_000 });
      const a = await client.getLock('shared').acquire(); // watchdog lease, renewed every second
      const aAliveAtGrant: boolean[] = [];
      client.on('lockAcquired', (event) => {
        if (event.name === 'shared') aAliveAtGrant.push(!a.signal.aborted);
      });
      await fleet.kill(0);
      await fleet.restart(0); // empty: no persistence
      const restartedAt = performance.now();
      // Checked at the reconnect, not at the next renewal (up to a second later).
      expect(await eventually(() => a.signal.aborted, 2_000)).toBe(true);
      expect(performance.now() - restartedAt).toBeLessThan(1_500);
      expect((a.signal.reason as LockLostError).reason).toBe('expired');
      const b = await client.getLock('shared').acquire({ leaseMs: 5_000, waitMs: 5_000 });
      expect(aAliveAtGrant).toEqual([false]);
      await b.unlock();
    });
  });

  describe('after close()', () => {
    it('refuses getLock() at once, like withLock()', async () => {
      const client = make();
      await client.close();
      expect(() => client.getLock('late')).toThrow(ClientClosedError);
    });
  });

  describe('extend()', () => {
    it('extends a handle and the current task\'s hold to a longer lease, and reports a lost one', async () => {
      const client = make();
      const redis = fleet.client(0);
      const key = `${client.options.keyPrefix}:{ext}`;
      const handle = await client.getLock('ext').acquire({ leaseMs: 1_000 });
      await handle.extend(20_000);
      expect(await redis.pttl(key)).toBeGreaterThan(15_000);
      await client.task(async () => {
        const lock = client.getLock('ext2');
        await lock.lock({ leaseMs: 1_000 });
        await lock.extend(30_000);
        expect(await redis.pttl(`${client.options.keyPrefix}:{ext2}`)).toBeGreaterThan(25_000);
        await redis.del(`${client.options.keyPrefix}:{ext2}`);
        await expect(lock.extend(30_000)).rejects.toBeInstanceOf(LockLostError);
        await expect(lock.unlock()).rejects.toBeInstanceOf(LockLostError);
        await expect(lock.extend(1_000)).rejects.toBeInstanceOf(IllegalMonitorStateError);
      });
      await handle.unlock();
      await expect(handle.extend(1_000)).rejects.toBeInstanceOf(IllegalMonitorStateError);
    });
  });

  describe('many fresh clients waiting at once', () => {
    it('subscribes every one of them while it connects, and hands the lock to each in turn', async () => {
      const holder = make();
      const held = await holder.getLock('crowd').acquire({ leaseMs: 30_000 });
      const waiters = Array.from({ length: 20 }, () => make({ keyPrefix: holder.options.keyPrefix }));
      const acquired: number[] = [];
      const all = Promise.all(
        waiters.map((client, index) =>
          client.getLock('crowd').withLock(
            async () => {
              acquired.push(index);
            },
            { leaseMs: 5_000, waitMs: 20_000 },
          ),
        ),
      );
      // Every waiter subscribed (its first try refused) before the release.
      const channel = `${holder.options.keyPrefix}:{crowd}:release`;
      const subscribers = async () => Number(((await fleet.client(0).pubsub('NUMSUB', channel)) as [string, number])[1]);
      expect(await eventually(async () => (await subscribers()) === 20, 10_000)).toBe(true);
      await held.unlock();
      await all;
      expect([...acquired].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    });
  });
});
