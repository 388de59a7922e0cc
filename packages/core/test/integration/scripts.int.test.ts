import { Redis } from 'ioredis';
import { RedisFleet } from '@org/rlock-testing';
import { LockCommands, RedisCommandError, lockKeys } from '@org/rlock-core';
import { uniquePrefix } from './support.js';

describe('lock scripts', () => {
  let fleet: RedisFleet;
  let redis: Redis;
  let commands: LockCommands;

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
    redis = fleet.client(0);
    commands = new LockCommands(redis, 2_000, 2_000);
  });
  afterAll(() => fleet.stop());

  const fresh = () => lockKeys(uniquePrefix(), 'job');

  describe('acquire-2', () => {
    it('grants a free lock with count 1, the lease as TTL and a token, and reenters for the same owner', async () => {
      const keys = fresh();
      const first = await commands.acquire(keys, 'c:t1', 10_000, 'op1');
      expect(first).toEqual({ granted: true, token: expect.stringMatching(/^\d+$/), count: 1 });
      expect(await redis.hgetall(keys.lock)).toEqual({ owner: 'c:t1', count: '1', token: (first as { token: string }).token, op: 'op1' });
      const pttl = await redis.pttl(keys.lock);
      expect(pttl).toBeGreaterThan(9_000);
      expect(pttl).toBeLessThanOrEqual(10_000);

      const again = await commands.acquire(keys, 'c:t1', 10_000, 'op2');
      expect(again).toEqual({ granted: true, token: (first as { token: string }).token, count: 2 });
    });

    it('refuses another owner with the remaining TTL and changes nothing', async () => {
      const keys = fresh();
      await commands.acquire(keys, 'c:t1', 10_000, 'op1');
      const before = await redis.hgetall(keys.lock);
      const other = await commands.acquire(keys, 'c:t2', 10_000, 'op2');
      expect(other.granted).toBe(false);
      expect((other as { ttlMs: number }).ttlMs).toBeGreaterThan(9_000);
      expect((other as { holder: string }).holder).toBe('c:t1');
      expect(await redis.hgetall(keys.lock)).toEqual(before);
    });

    it('raises the TTL to the longer lease on reentry and never shortens it', async () => {
      const keys = fresh();
      await commands.acquire(keys, 'o', 5_000, 'a');
      await commands.acquire(keys, 'o', 60_000, 'b');
      expect(await redis.pttl(keys.lock)).toBeGreaterThan(55_000);
      await commands.acquire(keys, 'o', 1_000, 'c');
      expect(await redis.pttl(keys.lock)).toBeGreaterThan(55_000);
    });

    it('answers a replayed op with its first outcome without counting twice', async () => {
      const keys = fresh();
      const first = await commands.acquire(keys, 'o', 10_000, 'same');
      const replay = await commands.acquire(keys, 'o', 10_000, 'same');
      expect(replay).toEqual(first);
      expect(await redis.hget(keys.lock, 'count')).toBe('1');
    });

    it('takes tokens from the slot counter, strictly increasing, and at least the server time in µs', async () => {
      const keys = fresh();
      const [seconds] = await redis.time();
      const tokens: bigint[] = [];
      for (let i = 0; i < 20; i++) {
        const reply = await commands.acquire(keys, 'o', 10_000, `a${i}`);
        tokens.push(BigInt((reply as { token: string }).token));
        await commands.release(keys, { owner: 'o', op: `r${i}` });
      }
      expect(tokens[0]! >= BigInt(seconds!) * 1_000_000n).toBe(true);
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]! > tokens[i - 1]!).toBe(true);
      expect(await redis.get(keys.fence)).toBe(String(tokens.at(-1)));
    });

    it('keeps tokens growing when the counter is far ahead of the clock, and after it is lost', async () => {
      const keys = fresh();
      const ahead = 9_000_000_000_000_000n;
      await redis.set(keys.fence, String(ahead));
      const reply = await commands.acquire(keys, 'o', 10_000, 'a');
      expect(BigInt((reply as { token: string }).token)).toBe(ahead + 1n);
      await commands.release(keys, { owner: 'o', op: 'r' });
      await redis.del(keys.fence);
      const after = await commands.acquire(keys, 'o', 10_000, 'b');
      // With the counter gone, the server clock floor still yields a fresh, larger-than-ever-issued-by-time token.
      expect(BigInt((after as { token: string }).token) > 1_700_000_000_000_000n).toBe(true);
    });

    it('reports WRONGTYPE as a RedisCommandError naming the full key', async () => {
      const keys = fresh();
      await redis.set(keys.lock, 'not a hash');
      const error = await commands.acquire(keys, 'o', 1_000, 'a').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RedisCommandError);
      expect((error as Error).message).toContain(keys.lock);
      expect((error as Error).message).toContain('WRONGTYPE');
      expect(await redis.get(keys.lock)).toBe('not a hash');
    });

    it('still works after SCRIPT FLUSH', async () => {
      const keys = fresh();
      await commands.acquire(keys, 'o', 1_000, 'a');
      await redis.script('FLUSH');
      expect(await commands.release(keys, { owner: 'o', op: 'b' })).toEqual({ released: true, remaining: 0, receivers: 0 });
    });
  });

  describe('release-2', () => {
    it('decrements, then deletes and announces on the last release', async () => {
      const keys = fresh();
      const listener = fleet.client(0);
      const messages: string[] = [];
      listener.on('message', (_channel: string, message: string) => messages.push(message));
      await listener.subscribe(keys.channel);
      await commands.acquire(keys, 'o', 10_000, 'a1');
      await commands.acquire(keys, 'o', 10_000, 'a2');
      expect(await commands.release(keys, { owner: 'o', op: 'r1' })).toEqual({ released: true, remaining: 1 });
      expect(await redis.exists(keys.lock)).toBe(1);
      // One subscriber connection (the listener above) got the announcement.
      expect(await commands.release(keys, { owner: 'o', op: 'r2' })).toEqual({ released: true, remaining: 0, receivers: 1 });
      expect(await redis.exists(keys.lock)).toBe(0);
      await redis.ping();
      await listener.ping();
      expect(messages).toEqual(['unlock']);
    });

    it('refuses a wrong owner and changes nothing', async () => {
      const keys = fresh();
      await commands.acquire(keys, 'o', 10_000, 'a');
      const before = await redis.hgetall(keys.lock);
      expect(await commands.release(keys, { owner: 'intruder', op: 'r' })).toEqual({ released: false, why: 'not-held', keyExists: true });
      expect(await redis.hgetall(keys.lock)).toEqual(before);
      await redis.del(keys.lock);
      expect(await commands.release(keys, { owner: 'o', op: 'r2' })).toEqual({ released: false, why: 'not-held', keyExists: false });
    });

    it('does not release twice when the same op is replayed', async () => {
      const keys = fresh();
      await commands.acquire(keys, 'o', 10_000, 'a1');
      await commands.acquire(keys, 'o', 10_000, 'a2');
      await commands.acquire(keys, 'o', 10_000, 'a3');
      expect(await commands.release(keys, { owner: 'o', op: 'r1' })).toEqual({ released: true, remaining: 2 });
      expect(await commands.release(keys, { owner: 'o', op: 'r1' })).toEqual({ released: true, remaining: 2 });
      expect(await redis.hget(keys.lock, 'count')).toBe('2');
    });

    it('answers a replayed last release as released, not as "not held"', async () => {
      const keys = fresh();
      await commands.acquire(keys, 'o', 10_000, 'a1');
      expect(await commands.release(keys, { owner: 'o', op: 'final' })).toEqual({ released: true, remaining: 0, receivers: 0 });
      expect(await commands.release(keys, { owner: 'o', op: 'final' })).toEqual({ released: true, remaining: 0 });
      const pttl = await redis.pttl(keys.released);
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(2_000);
    });

    it('cancels an acquire by op id only when it is the hold\'s last op', async () => {
      const keys = fresh();
      await commands.acquire(keys, 'o', 10_000, 'a1');
      await commands.acquire(keys, 'o', 10_000, 'a2');
      expect(await commands.release(keys, { owner: 'o', op: 'c1', ifOp: 'a1' })).toEqual({ released: false, why: 'op-not-applied' });
      expect(await commands.release(keys, { owner: 'o', op: 'c2', ifOp: 'a2' })).toEqual({ released: true, remaining: 1 });
    });

    it('releases every count with all, and only the hold with the given token', async () => {
      const keys = fresh();
      await commands.acquire(keys, 'o', 10_000, 'a1');
      await commands.acquire(keys, 'o', 10_000, 'a2');
      expect(await commands.release(keys, { owner: 'o', op: 'x', all: true, token: '1' })).toEqual({
        released: false,
        why: 'not-held',
        keyExists: true,
      });
      const token = await redis.hget(keys.lock, 'token');
      expect(await commands.release(keys, { owner: 'o', op: 'y', all: true, token: token! })).toEqual({ released: true, remaining: 0, receivers: 0 });
      expect(await redis.exists(keys.lock)).toBe(0);
    });
  });

  describe('renew-n', () => {
    it('renews held leases, reports gone and taken ones, and never recreates a key', async () => {
      const held = fresh();
      const gone = fresh();
      const taken = fresh();
      const a = (await commands.acquire(held, 'o', 1_000, 'a')) as { token: string };
      await commands.acquire(taken, 'other', 10_000, 'b');
      const codes = await commands.renew([
        { key: held.lock, owner: 'o', token: a.token, leaseMs: 20_000 },
        { key: gone.lock, owner: 'o', token: '1', leaseMs: 20_000 },
        { key: taken.lock, owner: 'o', token: '1', leaseMs: 20_000 },
      ]);
      expect(codes).toEqual([1, 0, -1]);
      expect(await redis.pttl(held.lock)).toBeGreaterThan(19_000);
      expect(await redis.exists(gone.lock)).toBe(0);
      expect(await redis.pttl(taken.lock)).toBeLessThanOrEqual(10_000);
    });

    it('refuses a renewal carrying a stale token of the same owner', async () => {
      const keys = fresh();
      await commands.acquire(keys, 'o', 1_000, 'a');
      const stale = await redis.hget(keys.lock, 'token');
      await commands.release(keys, { owner: 'o', op: 'r' });
      await commands.acquire(keys, 'o', 1_000, 'b');
      expect(await commands.renew([{ key: keys.lock, owner: 'o', token: stale!, leaseMs: 50_000 }])).toEqual([-1]);
      expect(await redis.pttl(keys.lock)).toBeLessThanOrEqual(1_000);
    });
  });

  describe('forceUnlock-1', () => {
    it('deletes a held lock and announces it; a free lock gives false', async () => {
      const keys = fresh();
      await commands.acquire(keys, 'o', 10_000, 'a');
      expect(await commands.forceUnlock(keys)).toBe(true);
      expect(await redis.exists(keys.lock)).toBe(0);
      expect(await commands.forceUnlock(keys)).toBe(false);
    });
  });
});
