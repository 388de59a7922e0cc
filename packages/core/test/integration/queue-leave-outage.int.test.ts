import { RedisFleet } from '@org/rlock-testing';
import { RedisUnavailableError, type RLockClient } from '@org/rlock-core';
import type { Redis } from 'ioredis';
import { ClientPool, eventually, uniquePrefix } from './support.js';

/** The lock objects whose waiters keep a place in Redis, and the key that lists the waiting owners. */
const QUEUED_KINDS = [
  { kind: 'fair lock', lock: (client: RLockClient) => client.getFairLock('queued'), waiting: 'queue' },
  { kind: "read-write lock's writer", lock: (client: RLockClient) => client.getReadWriteLock('queued').writeLock(), waiting: 'writers' },
];

/** Commands ioredis keeps for a connection that is not ready, to write once it is (no public reading of it). */
const offlineCommands = (connection: Redis): number => (connection as unknown as { offlineQueue: { length: number } }).offlineQueue.length;

// A try made once the connection closed, before a reconnect failed, waits in ioredis's offline queue; the call then fails
// (Redis stays down past commandTimeoutMs), and its leave, made while the connection is known down, is refused unsent. Once
// Redis is back the try runs and queues the owner: only a leave sent after it takes that place out, or an owner whose call
// ended heads the queue for its waiter lease.
describe('a waiting call that failed while Redis was down', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();

  beforeAll(async () => {
    // 'always': the holder's grant is on disk when its reply arrives, so the restart keeps it.
    fleet = await RedisFleet.start({ size: 1, appendonly: true, appendfsync: 'always' });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  it.each(QUEUED_KINDS)(
    'leaves the $kind queue once Redis is back, after its try that ran late',
    async ({ lock, waiting }) => {
      const keyPrefix = uniquePrefix();
      const server = { host: '127.0.0.1', port: fleet.port(0) };
      const holder = pool.make(fleet.url(0), { keyPrefix, redis: { ...server, retryStrategy: () => 20 } });
      // A waiter lease far past the test's bounds: only a leave takes the waiter's place out. One reconnect 300 ms after the
      // connection closed, then none until the test reconnects it, once Redis is back and has the scripts again.
      const waiter = pool.make(fleet.url(0), {
        keyPrefix,
        watchdogTimeoutMs: 60_000,
        commandTimeoutMs: 1_000,
        redis: { ...server, retryStrategy: (times: number) => (times === 1 ? 300 : 600_000) },
      });
      waiter.on('error', () => undefined);
      holder.on('error', () => undefined);
      // The waiter's first hold, so its notice channel is subscribed before the outage.
      await waiter.task(() => lock(waiter).withLock(() => undefined, { leaseMs: 5_000 }));
      const held = await lock(holder).acquire({ leaseMs: 60_000 });

      await fleet.kill(0);
      const connection = waiter.redis as Redis;
      expect(await eventually(() => connection.status === 'reconnecting', 2_000)).toBe(true);
      const failed = await lock(waiter)
        .acquire({ leaseMs: 5_000, waitMs: 30_000 })
        .catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(RedisUnavailableError);
      // Its first try still waits to be written.
      expect(offlineCommands(connection)).toBeGreaterThan(0);

      await fleet.restart(0);
      // The holder's connection loads the scripts as it connects: answered after them, the ping says they are in.
      const holderConnection = holder.redis as Redis;
      expect(await eventually(() => holderConnection.status === 'ready', 5_000)).toBe(true);
      await holderConnection.ping();
      expect(connection.status).toBe('reconnecting');
      await connection.connect();

      // The try ran once the connection was back; the place it made is gone again, the holder's hold stays.
      const redis = fleet.client(0);
      expect(await eventually(() => offlineCommands(connection) === 0, 5_000)).toBe(true);
      expect(await eventually(async () => (await redis.exists(`${keyPrefix}:{queued}:${waiting}`)) === 0, 5_000)).toBe(true);
      expect(await redis.exists(`${keyPrefix}:{queued}`)).toBe(1);
      await held.unlock();
    },
    30_000,
  );
});
