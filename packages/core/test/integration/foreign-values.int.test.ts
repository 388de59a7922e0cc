import type { Redis } from 'ioredis';
import { RedisFleet } from '@org/rlock-testing';
import { RedisCommandError, type RLock, type RLockClient } from '@org/rlock-core';
import { ClientPool } from './support.js';

/** A foreign value at a lock's key: how to write it, and how to read it back unchanged. */
interface Foreign {
  readonly what: string;
  write(redis: Redis, key: string): Promise<unknown>;
  read(redis: Redis, key: string): Promise<unknown>;
}

const FOREIGN: readonly Foreign[] = [
  // Three words: the layout-5 parser took them for "<head> <token> <owner>", and lock() waited forever.
  { what: 'a string of three words', write: (r, k) => r.set(k, 'not a lock'), read: (r, k) => r.get(k) },
  { what: 'a string of digits', write: (r, k) => r.set(k, '42'), read: (r, k) => r.get(k) },
  { what: 'a list', write: (r, k) => r.rpush(k, 'a', 'b'), read: (r, k) => r.lrange(k, 0, -1) },
  { what: 'a hash without a token', write: (r, k) => r.hset(k, 'someone:t1', '1'), read: (r, k) => r.hgetall(k) },
  { what: 'a hash whose count does not parse', write: (r, k) => r.hset(k, 'someone:t1', 'one', 't', '17'), read: (r, k) => r.hgetall(k) },
  { what: 'a hash whose token does not parse', write: (r, k) => r.hset(k, 'someone:t1', '1', 't', '1e400'), read: (r, k) => r.hgetall(k) },
  { what: 'a hash of two owners', write: (r, k) => r.hset(k, 'a:t1', '1', 'b:t1', '1', 't', '17'), read: (r, k) => r.hgetall(k) },
  {
    what: "a read-write lock's hash",
    write: (r, k) => r.hset(k, 'mode', 'write', 'w', 'a:t1', 'wc', '1', 'wt', '17', 'wo', '1'),
    read: (r, k) => r.hgetall(k),
  },
];

const LEASE_MS = 10_000;

type Getter = (client: RLockClient, name: string) => RLock<string>;
const KINDS: readonly (readonly [string, Getter])[] = [
  ['lock', (client, name) => client.getLock(name)],
  ['fair lock', (client, name) => client.getFairLock(name)],
  ['non-reentrant lock', (client, name) => client.getNonReentrantLock(name)],
];

describe('a lock key that holds anything but a hold', () => {
  let fleet: RedisFleet;
  let redis: Redis;
  const pool = new ClientPool();

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
    redis = fleet.client(0);
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  /** Every key under the client's prefix. */
  const keysOf = async (client: RLockClient): Promise<string[]> => (await redis.keys(`${client.options.keyPrefix}:*`)).sort();

  /** The call's error, checked: a RedisCommandError naming the full key, with the value unchanged and no key created. */
  async function expectRejected(client: RLockClient, key: string, foreign: Foreign, call: () => Promise<unknown>): Promise<void> {
    const before = await foreign.read(redis, key);
    const keysBefore = await keysOf(client);
    const error = await call().then(
      () => new Error('the call succeeded'),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RedisCommandError);
    expect((error as RedisCommandError).message).toContain(`"${key}"`);
    expect((error as RedisCommandError).key).toBe(key);
    expect(await foreign.read(redis, key)).toEqual(before);
    expect(await keysOf(client)).toEqual(keysBefore);
  }

  describe('a read-write lock on a name a lock holds', () => {
    for (const mode of ['readLock', 'writeLock'] as const) {
      it(`${mode}() rejects naming the key, and the lock's hold stays as it was`, async () => {
        const client = pool.make(fleet.url(0));
        const key = `${client.options.keyPrefix}:{x}`;
        const held = await client.getLock('x').acquire({ leaseMs: LEASE_MS });
        const hold: Foreign = { write: () => Promise.resolve(), read: (r: Redis, k: string) => r.hgetall(k), what: 'a hold' };
        const other = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
        await expectRejected(other, key, hold, () => other.getReadWriteLock('x')[mode]().acquire({ leaseMs: LEASE_MS, waitMs: 2_000 }));
        await held.unlock();
      });
    }
  });

  for (const [kind, get] of KINDS) {
    describe(kind, () => {
      for (const foreign of FOREIGN) {
        it(`lock() rejects at once on ${foreign.what}, naming the key, and writes nothing`, async () => {
          const client = pool.make(fleet.url(0));
          const key = `${client.options.keyPrefix}:{x}`;
          await foreign.write(redis, key);
          // No waitMs: a foreign value read as another's hold makes this wait forever (the test's timeout).
          await expectRejected(client, key, foreign, () => client.task(() => get(client, 'x').lock({ leaseMs: LEASE_MS })));
        });
      }

      it('tryLock() and acquire() reject rather than answer false or time out', async () => {
        const client = pool.make(fleet.url(0));
        const key = `${client.options.keyPrefix}:{x}`;
        const foreign = FOREIGN[0] as Foreign;
        await foreign.write(redis, key);
        const lock = get(client, 'x');
        await expectRejected(client, key, foreign, () => client.task(() => lock.tryLock({ leaseMs: LEASE_MS })));
        await expectRejected(client, key, foreign, () => client.task(() => lock.tryLock({ leaseMs: LEASE_MS, waitMs: 2_000 })));
        await expectRejected(client, key, foreign, () => lock.acquire({ leaseMs: LEASE_MS, waitMs: 2_000 }));
      });
    });
  }
});
