import { createServer, type Server } from 'node:net';
import { RedisFleet } from '@org/rlock-testing';
import { LockAcquireTimeoutError, RedisUnavailableError, RLockClient } from '@org/rlock-core';
import { ClientPool, eventually, holdAt } from './support.js';

const WAIT_MS = 400;
/**
 * How late past waitMs a call may settle: scheduling slack on a loaded
 * 2-core machine. A bound on the deadline the library promises, not a speed
 * claim: a margin added to the deadline (the old one was 250 ms) or a wait for
 * Redis to answer would settle at or past it.
 */
const LATE_MS = 250;

/** Every call that waits, each on an object of its own, as a new user writes it. */
const waitingCalls: [string, (client: RLockClient) => Promise<unknown>][] = [
  ['lock', (client) => client.getLock('lock').acquire({ waitMs: WAIT_MS, leaseMs: 5_000 })],
  ['lock() in a task', (client) => client.task(() => client.getLock('task').lock({ waitMs: WAIT_MS, leaseMs: 5_000 }))],
  ['fair lock', (client) => client.getFairLock('fair').acquire({ waitMs: WAIT_MS, leaseMs: 5_000 })],
  ['read lock', (client) => client.getReadWriteLock('rw').readLock().acquire({ waitMs: WAIT_MS, leaseMs: 5_000 })],
  ['write lock', (client) => client.getReadWriteLock('rw').writeLock().acquire({ waitMs: WAIT_MS, leaseMs: 5_000 })],
  ['semaphore', (client) => client.getSemaphore('sem').acquire(1, { waitMs: WAIT_MS })],
  ['permit semaphore', (client) => client.getPermitExpirableSemaphore('permits').acquire({ waitMs: WAIT_MS, leaseMs: 5_000 })],
  ['latch await', (client) => client.getCountDownLatch('latch').await({ waitMs: WAIT_MS })],
  ['multi-lock', (client) => client.getMultiLock([client.getLock('m1'), client.getFairLock('m2')]).acquire({ waitMs: WAIT_MS, leaseMs: 5_000 })],
];

/** Runs `call`, and what it rejected with and how long it took. */
async function timed(call: () => Promise<unknown>): Promise<{ error: unknown; elapsedMs: number }> {
  const started = performance.now();
  const error = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, elapsedMs: performance.now() - started };
}

function expectTimedOutOnRedis(name: string, { error, elapsedMs }: { error: unknown; elapsedMs: number }): void {
  expect([name, error]).toEqual([name, expect.any(LockAcquireTimeoutError)]);
  expect([name, (error as Error).cause]).toEqual([name, expect.any(RedisUnavailableError)]);
  expect([name, elapsedMs]).toEqual([name, expect.any(Number)]);
  expect(elapsedMs).toBeGreaterThanOrEqual(WAIT_MS - 5);
  expect(elapsedMs).toBeLessThan(WAIT_MS + LATE_MS);
}

describe('waitMs', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  describe('against a port nothing listens on', () => {
    const freePort = (): Promise<number> =>
      new Promise<number>((resolve) => {
        const server: Server = createServer();
        server.listen(0, '127.0.0.1', () => {
          const { port } = server.address() as { port: number };
          server.close(() => resolve(port));
        });
      });

    beforeAll(async () => {
      // The first waiting call of a test process runs code compiled on the
      // way (ts-jest): measured, it would time the test runner, not the deadline.
      const warm = new RLockClient({ redis: `redis://127.0.0.1:${await freePort()}`, keyPrefix: 'warm' });
      warm.on('error', () => undefined);
      for (const [, call] of waitingCalls) await call(warm).catch(() => undefined);
      await warm.close();
    });

    it.each(waitingCalls)('settles %s by waitMs with LockAcquireTimeoutError whose cause is the refused connection', async (name, call) => {
      const client = pool.make(`redis://127.0.0.1:${await freePort()}`); // commandTimeoutMs 5 000
      client.on('error', () => undefined);
      const outcome = await timed(() => call(client));
      expectTimedOutOnRedis(name, outcome);
    });

    it('rides out the refused connection in tryLock({ waitMs }) until waitMs, then rejects with the Redis failure', async () => {
      const client = pool.make(`redis://127.0.0.1:${await freePort()}`);
      client.on('error', () => undefined);
      const { error, elapsedMs } = await timed(() => client.task(() => client.getLock('try').tryLock({ waitMs: WAIT_MS, leaseMs: 5_000 })));
      expect(error).toBeInstanceOf(RedisUnavailableError);
      expect(elapsedMs).toBeGreaterThanOrEqual(WAIT_MS - 5);
      expect(elapsedMs).toBeLessThan(WAIT_MS + LATE_MS);
    });
  });

  describe('against a server that does not answer', () => {
    it('settles every waiting call by waitMs with LockAcquireTimeoutError whose cause says Redis did not answer (SIGSTOP)', async () => {
      const client = pool.make(fleet.url(0)); // commandTimeoutMs 5 000
      const holder = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
      // Connected and held, so the frozen server is the only reason to wait.
      await holder.getLock('lock').acquire({ leaseMs: 60_000 });
      await client.getLock('warm').acquire({ leaseMs: 1_000 });
      const outcomes: [string, { error: unknown; elapsedMs: number }][] = [];
      await fleet.pause(0);
      try {
        for (const [name, call] of waitingCalls) outcomes.push([name, await timed(() => call(client))]);
      } finally {
        await fleet.resume(0);
      }
      for (const [name, outcome] of outcomes) expectTimedOutOnRedis(name, outcome);
      // The tries still out when the calls gave up run now: whatever they were granted is undone.
      const redis = fleet.client(0);
      const prefix = client.options.keyPrefix;
      expect(await eventually(async () => (await redis.exists(`${prefix}:{task}`, `${prefix}:{fair}`, `${prefix}:{m1}`)) === 0, 10_000)).toBe(true);
      expect((await holdAt(redis, `${prefix}:{lock}`))?.owner ?? '').not.toContain(client.clientId);
    });

    it('settles lock({ waitMs }) by waitMs while the server holds every command (CLIENT PAUSE)', async () => {
      const client = pool.make(fleet.url(0));
      await client.getLock('warm').acquire({ leaseMs: 1_000 });
      await fleet.clientPause(0, 2_000);
      const outcome = await timed(() => client.task(() => client.getLock('paused').lock({ waitMs: WAIT_MS, leaseMs: 5_000 })));
      expectTimedOutOnRedis('lock', outcome);
      // Once the pause ends the try runs, and its grant is undone.
      expect(await eventually(async () => (await fleet.client(0).exists(`${client.options.keyPrefix}:{paused}`)) === 0, 10_000)).toBe(true);
    });
  });
});
