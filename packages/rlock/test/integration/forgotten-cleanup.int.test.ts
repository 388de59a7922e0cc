import { createServer, request, type Server } from 'node:http';
import { jest } from '@jest/globals';
import { LockLostError, createClient, taskMiddleware, type ClientOptions, type HoldLeakedEvent, type RLockClient } from '@org/rlock';
import { RedisFleet, eventually, uniquePrefix } from '@org/rlock-testing';
import { Child, fixture } from './children.js';

/** What a new user forgets (an unlock, a close, a busy loop), and what rlock then says. */
describe('forgotten cleanup', () => {
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
    jest.spyOn(process, 'emitWarning').mockImplementation(((message: string | Error, options?: { code?: string; detail?: string }) => {
      warnings.push({ message: String(message), code: options?.code, detail: options?.detail });
    }) as typeof process.emitWarning);
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
      expect(events).toEqual([
        expect.objectContaining({ name: 'forgotten', count: 1, source: 'task', stack: undefined, owner: expect.stringMatching(new RegExp(`^${client.clientId}:`)) }),
      ]);
      expect(events[0]?.owner.endsWith(`:${events[0].taskId}`)).toBe(true);
      expect(warnings).toEqual([{ message: expect.stringContaining('"forgotten"'), code: 'RLOCK_HOLD_LEAKED', detail: undefined }]);
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
      const server: Server = createServer((req, res) => {
        middleware(req, res, () => {
          void client.getLock(`request${req.url ?? ''}`).tryLock().then(() => res.end('ok'));
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      try {
        await new Promise<void>((resolve, reject) => {
          request({ host: '127.0.0.1', port, path: '/a', agent: false }, (res) => res.resume().on('end', resolve)).on('error', reject).end();
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
