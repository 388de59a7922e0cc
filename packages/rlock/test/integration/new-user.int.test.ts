import { createServer, type Server } from 'node:net';
import { createServer as createHttpServer, request, type Server as HttpServer } from 'node:http';
import { jest } from '@jest/globals';
import {
  ClientClosedError,
  IllegalMonitorStateError,
  LockAcquireTimeoutError,
  LockLostError,
  RedisUnavailableError,
  createClient,
  taskMiddleware,
  type ClientOptions,
  type HoldLeakedEvent,
  type RLockClient,
} from '@org/rlock';
import { RedisFleet, eventually, uniquePrefix } from '@org/rlock-testing';
import { Child, fixture } from './children.js';

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
  /** Records holdLeaked events and RLOCK_HOLD_LEAKED warnings (kept off stderr). */
  const watchLeaks = (client: RLockClient) => {
    const events: HoldLeakedEvent[] = [];
    client.on('holdLeaked', (event) => events.push(event));
    const warnings: { message: string; code: unknown; detail: unknown }[] = [];
    jest.spyOn(process, 'emitWarning').mockImplementation((message: string | Error, options?: unknown) => {
      const { code, detail } = (options ?? {}) as { code?: string; detail?: string };
      warnings.push({ message: String(message), code, detail });
    });
    return { events, warnings };
  };

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(async () => {
    jest.restoreAllMocks();
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
        const warm = client.getLock('warm');
        await warm.lock({ leaseMs: 1_000 });
        await warm.unlock();
        await fleet.pause(0);
        try {
          const started = performance.now();
          const error = await client
            .getLock('hang')
            .lock({ waitMs: 1_000, leaseMs: 5_000 })
            .catch((e: unknown) => e);
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
    it("extends a handle and the current task's hold to a longer lease, and reports a lost one", async () => {
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
      // Every waiter subscribed (its first try refused) before the release: each on its own wake channel.
      const channels = waiters.map((client) => `${holder.options.keyPrefix}:{crowd}:release:${client.clientId}`);
      const subscribers = async () => {
        const counts = (await fleet.client(0).pubsub('NUMSUB', ...channels)) as (string | number)[];
        return counts.filter((_, i) => i % 2 === 1).reduce<number>((sum, count) => sum + Number(count), 0);
      };
      expect(await eventually(async () => (await subscribers()) === 20, 10_000)).toBe(true);
      await held.unlock();
      await all;
      expect([...acquired].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    });
  });

  describe('a task that ends holding a lock', () => {
    it('is reported once, naming the lock, by an event and a process warning; a tidy task or a handle is not', async () => {
      const client = make();
      const { events, warnings } = watchLeaks(client);
      await client.task(async () => {
        const tidy = client.getLock('tidy');
        await tidy.lock();
        await tidy.lock();
        await tidy.unlock();
        await tidy.unlock();
      });
      // A handle carries its hold out of the task (acquire() inside or outside one).
      const outside = await client.getLock('handle-outside').acquire();
      const inside = await client.task(() => client.getLock('handle-inside').acquire());
      // A release on its way when the task ends is no leak.
      await client.task(async () => {
        await client.getLock('released-without-waiting').lock();
        void client.getLock('released-without-waiting').unlock();
      });
      const lock = client.getLock('forgotten');
      expect(await client.task(() => lock.tryLock())).toBe(true);
      expect(events.map(({ name, count, source, stack }) => ({ name, count, source, stack }))).toEqual([
        { name: 'forgotten', count: 1, source: 'task', stack: undefined },
      ]);
      expect(events[0]?.owner).toBe(`${client.clientId}:${events[0]?.taskId}`);
      expect(warnings.map(({ code, detail }) => ({ code, detail }))).toEqual([{ code: 'RLOCK_HOLD_LEAKED', detail: undefined }]);
      expect(warnings[0]?.message).toContain('"forgotten"');
      // The way out the report names: forceUnlock() frees it for later callers.
      await lock.forceUnlock();
      await expect(lock.withLock(() => 'free', { waitMs: 2_000 })).resolves.toBe('free');
      expect(events).toHaveLength(1);
      await outside.unlock();
      await inside.unlock();
    });

    it('names where the lock was taken with captureLeakStacks', async () => {
      const client = make({ captureLeakStacks: true });
      const { events, warnings } = watchLeaks(client);
      const takeAndForget = async () => {
        await client.getLock('traced').lock({ leaseMs: 10_000 });
      };
      await client.task(takeAndForget);
      expect(events).toHaveLength(1);
      expect(events[0]?.stack).toContain('takeAndForget');
      expect(warnings[0]?.detail).toContain('takeAndForget');
    });

    it('is reported when a request under taskMiddleware() ends holding one', async () => {
      const client = make();
      const { events } = watchLeaks(client);
      const middleware = taskMiddleware();
      const server: HttpServer = createHttpServer((req, res) => {
        middleware(req, res, () => {
          void client
            .getLock(`request${req.url ?? ''}`)
            .tryLock()
            .then(() => res.end('ok'));
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      try {
        await new Promise<void>((resolve, reject) => {
          request({ host: '127.0.0.1', port, path: '/a', agent: false }, (res) => res.resume().on('end', resolve))
            .on('error', reject)
            .end();
        });
        expect(await eventually(() => events.length > 0, 5_000)).toBe(true);
        expect(events).toEqual([expect.objectContaining({ name: 'request/a', source: 'request', count: 1 })]);
      } finally {
        server.close();
      }
    });
  });

  describe('a client never closed', () => {
    const children: Child[] = [];
    afterEach(async () => {
      for (const child of children.splice(0)) {
        child.kill('SIGKILL');
        await child.exited;
      }
    });
    const run = (mode: string, keyPrefix = uniquePrefix()): Child => {
      // Killed after 20 s: a process kept alive by an idle client would sit there.
      const child = new Child(fixture('idle-client.mjs'), { REDIS_URL: fleet.url(0), PREFIX: keyPrefix, MODE: mode }, [], 20_000);
      children.push(child);
      return child;
    };

    it('lets the process end by itself, whether it only made the client or also took and released a lock', async () => {
      const [created, locked] = [run('create'), run('lock')];
      expect(await created.exited).toEqual({ code: 0, signal: null });
      expect(await locked.exited).toEqual({ code: 0, signal: null });
      expect(locked.lines).toEqual(['done']);
    });

    it('keeps the process alive while it holds a lock, though its main code is done, and lets it end once released', async () => {
      const keyPrefix = uniquePrefix();
      const child = run('hold', keyPrefix);
      await child.line(/^held$/);
      const key = `${keyPrefix}:{job}`;
      // Renewed (so the process runs) well past three 600 ms leases.
      const heldSince = performance.now();
      expect(await eventually(async () => performance.now() - heldSince > 2_000 && (await fleet.client(0).exists(key)) === 1, 5_000)).toBe(true);
      expect(child.process.exitCode).toBeNull();
      child.kill('SIGUSR2');
      expect(await child.exited).toEqual({ code: 0, signal: null });
      expect(child.lines).toEqual(['held', 'released']);
      expect(await fleet.client(0).exists(key)).toBe(0);
    });
  });

  describe('a blocked event loop', () => {
    it('says that the event loop was blocked, and for how long, when it cost a hold its lease', async () => {
      const client = make({ watchdogTimeoutMs: 600 });
      const held = await client.getLock('stalled').acquire();
      const stalledUntil = performance.now() + 1_500;
      while (performance.now() < stalledUntil) {
        // A synchronous stall, as a CPU-bound loop or a huge JSON.parse would make.
      }
      expect(await eventually(() => held.signal.aborted, 5_000)).toBe(true);
      const error = held.signal.reason as LockLostError;
      expect(error).toBeInstanceOf(LockLostError);
      expect(error.message).toMatch(/the event loop was blocked for ~\d+ ms before the renewal ran/);
      await held.unlock().catch(() => undefined);
    });
  });
});
