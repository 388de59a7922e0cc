import { Redis } from 'ioredis';
import { RedisFleet, evalScript } from '@org/rlock-testing';
import { SCRIPTS, parseHold, plainLockKeys, type EmbeddedScript, type PlainLockKeys } from '@org/rlock-core/internal';
import { uniquePrefix } from './support.js';

/**
 * Script-level tests: each script by EVAL of its text with raw KEYS and ARGV
 * (by name, in its header's order), its raw reply checked against its header.
 * Behaviour through the API is tested elsewhere.
 */
describe('lock scripts', () => {
  let fleet: RedisFleet;
  let redis: Redis;

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
    redis = fleet.client(0);
  });
  afterAll(() => fleet.stop());
  const run = <A>(script: EmbeddedScript<A>, args: NoInfer<A>) => evalScript(redis, script, args);
  const hold = async (key: string) => parseHold(await redis.hgetall(key));

  const fresh = (): PlainLockKeys => plainLockKeys(uniquePrefix(), 'job', 'o');
  const WINDOW = 2_000;
  const CLIENTS_TTL = 30_000;
  const acquire = (keys: PlainLockKeys, owner: string, leaseMs: number, op: string, waits = '1') =>
    run(SCRIPTS.lockAcquire, {
      lock: keys.lock,
      fence: keys.fence,
      cancelled: keys.cancelled,
      clients: keys.clients,
      owner,
      leaseMs,
      op,
      once: '0',
      clientsTtlMs: CLIENTS_TTL,
      waits,
    }) as Promise<unknown[]>;
  const release = (keys: PlainLockKeys, owner: string, op: string, options: { all?: boolean; token?: string; waiting?: boolean; sharded?: boolean } = {}) =>
    run(SCRIPTS.lockRelease, {
      lock: keys.lock,
      released: keys.released,
      clients: keys.clients,
      owner,
      op,
      all: options.all ? '1' : '0',
      token: options.token ?? '',
      replayWindowMs: WINDOW,
      sharded: options.sharded ? '1' : '0',
      wakePrefix: keys.wakePrefix,
      waiting: options.waiting ? '1' : '0',
      clientsTtlMs: CLIENTS_TTL,
    }) as Promise<unknown[]>;
  const cancel = (keys: PlainLockKeys, owner: string, op: string, acquireOp: string, all = false) =>
    run(SCRIPTS.lockCancel, {
      lock: keys.lock,
      released: keys.released,
      cancelled: keys.cancelled,
      clients: keys.clients,
      owner,
      op,
      acquireOp,
      all: all ? '1' : '0',
      replayWindowMs: WINDOW,
      sharded: '0',
      wakePrefix: keys.wakePrefix,
    });
  const wake = (keys: PlainLockKeys, clientId: string) =>
    run(SCRIPTS.lockWake, { lock: keys.lock, clients: keys.clients, clientId, sharded: '0', wakePrefix: keys.wakePrefix });
  /** A connection listening on the wake channels of `clientIds`, and what each heard. */
  const listenAs = async (keys: PlainLockKeys, ...clientIds: string[]) => {
    const listener = fleet.client(0);
    const heard: string[] = [];
    listener.on('message', (channel: string, message: string) => heard.push(`${channel.slice(keys.wakePrefix.length)} ${message}`));
    await listener.subscribe(...clientIds.map((id) => keys.wakePrefix + id));
    return { heard, settle: () => listener.ping() };
  };

  describe('acquire', () => {
    it('grants a free lock with count 1, the lease as TTL and a token, and reenters for the same owner', async () => {
      const keys = fresh();
      const [granted, token, count] = await acquire(keys, 'c:t1', 10_000, 'op1');
      expect([granted, count]).toEqual([1, 1]);
      expect(token).toMatch(/^\d+$/);
      expect(await hold(keys.lock)).toEqual({ owner: 'c:t1', count: 1, token, op: 'op1', once: false });
      // A hash: the owner's count beside the token and the last op.
      expect(await redis.hgetall(keys.lock)).toEqual({ 'c:t1': '1', t: token, o: 'op1' });
      const pttl = await redis.pttl(keys.lock);
      expect(pttl).toBeGreaterThan(9_000);
      expect(pttl).toBeLessThanOrEqual(10_000);
      expect(await acquire(keys, 'c:t1', 10_000, 'op2')).toEqual([1, token, 2]);
      expect(await redis.hgetall(keys.lock)).toEqual({ 'c:t1': '2', t: token, o: 'op2' });
    });

    it('keeps a hold of default ids (21-character client id, task and op ids of 4 base-36 digits) in one listpack', async () => {
      const keys = fresh();
      const owner = `${'c'.repeat(21)}:tzzzz`;
      await acquire(keys, owner, 10_000, 'zzzz');
      expect(await redis.object('ENCODING', keys.lock)).toBe('listpack');
      expect(await redis.hlen(keys.lock)).toBe(3);
    });

    it('refuses another owner with the remaining TTL and the holder, and changes nothing', async () => {
      const keys = fresh();
      await acquire(keys, 'c:t1', 10_000, 'op1');
      const before = await redis.hgetall(keys.lock);
      const [code, ttl, holder] = await acquire(keys, 'c:t2', 10_000, 'op2');
      expect(code).toBe(0);
      expect(ttl).toBeGreaterThan(9_000);
      expect(holder).toBe('c:t1');
      expect(await redis.hgetall(keys.lock)).toEqual(before);
    });

    it('raises the TTL to the longer lease on reentry and never shortens it', async () => {
      const keys = fresh();
      await acquire(keys, 'o:t0', 5_000, 'a');
      await acquire(keys, 'o:t0', 60_000, 'b');
      expect(await redis.pttl(keys.lock)).toBeGreaterThan(55_000);
      await acquire(keys, 'o:t0', 1_000, 'c');
      expect(await redis.pttl(keys.lock)).toBeGreaterThan(55_000);
    });

    it('answers a replay of the last op with its first outcome without counting twice', async () => {
      const keys = fresh();
      const first = await acquire(keys, 'o:t0', 10_000, 'same');
      expect(await acquire(keys, 'o:t0', 10_000, 'same')).toEqual(first);
      expect((await hold(keys.lock))?.count).toBe(1);
    });

    it('takes tokens from the slot counter, strictly increasing, and at least the server time in µs', async () => {
      const keys = fresh();
      const [seconds] = await redis.time();
      const tokens: bigint[] = [];
      for (let i = 0; i < 20; i++) {
        const [, token] = await acquire(keys, 'o:t0', 10_000, `a${i}`);
        tokens.push(BigInt(token as string));
        await release(keys, 'o:t0', `r${i}`);
      }
      expect(tokens[0]! >= BigInt(seconds!) * 1_000_000n).toBe(true);
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]! > tokens[i - 1]!).toBe(true);
      expect(await redis.get(keys.fence)).toBe(String(tokens.at(-1)));
    });

    it('keeps a token exact in its decimal digits up to 2^53', async () => {
      const keys = fresh();
      for (const [i, before] of [2n ** 52n + 1n, 2n ** 53n - 2n].entries()) {
        await redis.set(keys.fence, String(before));
        const [, token] = await acquire(keys, 'o:t0', 10_000, `a${i}`);
        expect(BigInt(token as string)).toBe(before + 1n);
        expect(await redis.hget(keys.lock, 't')).toBe(String(before + 1n));
        // A reentry answers the token read back from the hash.
        expect(await acquire(keys, 'o:t0', 10_000, `b${i}`)).toEqual([1, token, 2]);
        expect(await release(keys, 'o:t0', `r${i}`, { all: true, token: token as string })).toEqual([1, 0, 0]);
      }
    });

    it('keeps tokens growing when the counter is far ahead of the clock, and after it is lost', async () => {
      const keys = fresh();
      const ahead = 9_000_000_000_000_000n;
      await redis.set(keys.fence, String(ahead));
      const [, token] = await acquire(keys, 'o:t0', 10_000, 'a');
      expect(BigInt(token as string)).toBe(ahead + 1n);
      expect(await redis.get(keys.fence)).toBe(String(ahead + 1n));
      await release(keys, 'o:t0', 'r');
      await redis.del(keys.fence);
      const [, after] = await acquire(keys, 'o:t0', 10_000, 'b');
      // With the counter gone, the server clock floor still yields a token above any issued by time so far.
      expect(BigInt(after as string) > 1_700_000_000_000_000n).toBe(true);
    });

    it('refuses an op that was cancelled before it arrived, and changes nothing', async () => {
      const keys = fresh();
      expect(await cancel(keys, 'o:t0', 'c1', 'late')).toBe(0);
      expect(await acquire(keys, 'o:t0', 10_000, 'late')).toEqual([-1]);
      expect(await redis.exists(keys.lock)).toBe(0);
      // A new op of the same owner is granted.
      expect((await acquire(keys, 'o:t0', 10_000, 'fresh'))[0]).toBe(1);
    });

    it('reports WRONGTYPE as an error reply and leaves the key alone', async () => {
      const keys = fresh();
      await redis.hset(keys.lock, 'mode', 'read');
      await expect(acquire(keys, 'o:t0', 1_000, 'a')).rejects.toThrow(/WRONGTYPE/);
      expect(await redis.hgetall(keys.lock)).toEqual({ mode: 'read' });
      const other = fresh();
      await redis.set(other.lock, 'not a hold');
      await expect(acquire(other, 'o:t0', 1_000, 'a')).rejects.toThrow(/WRONGTYPE/);
      expect(await redis.get(other.lock)).toBe('not a hold');
    });

    it('refuses a hash that is no hold (no token, a count or token that does not parse, two owners, other fields) and writes nothing', async () => {
      const notHolds = [
        { 'c:t1': '1' },
        { 'c:t1': 'one', t: '17' },
        { 'c:t1': '1', t: '1e400' },
        { 'c:t1': '1', t: '-1' },
        { 'a:t1': '1', 'b:t1': '1', t: '17' },
        { 'c:t1': '1', t: '17', mode: 'write' },
        { 'c:t1': '1', t: '17', n: 'yes' },
      ];
      for (const fields of notHolds) {
        const keys = fresh();
        await redis.hset(keys.lock, fields);
        await expect(acquire(keys, 'c:t1', 1_000, 'a')).rejects.toThrow(/WRONGTYPE/);
        await expect(release(keys, 'c:t1', 'r')).rejects.toThrow(/WRONGTYPE/);
        await expect(cancel(keys, 'c:t1', 'x', 'a')).rejects.toThrow(/WRONGTYPE/);
        expect(await redis.hgetall(keys.lock)).toEqual(fields);
        expect(await redis.exists(keys.fence, keys.cancelled, keys.released, keys.clients)).toBe(0);
      }
    });

    it('is registered under the SHA1 the generator computed', async () => {
      for (const script of Object.values(SCRIPTS)) {
        expect(await redis.script('LOAD', script.lua)).toBe(script.sha);
      }
    });
  });

  describe('release', () => {
    it('decrements, then deletes and wakes the client a refused try registered, counting the receivers', async () => {
      const keys = fresh();
      const { heard, settle } = await listenAs(keys, 'w');
      await acquire(keys, 'o:t0', 10_000, 'a1');
      await acquire(keys, 'o:t0', 10_000, 'a2');
      expect((await acquire(keys, 'w:t1', 10_000, 'b'))[0]).toBe(0);
      expect(await redis.zrange(keys.clients, '0', '-1')).toEqual(['w']);
      expect(await release(keys, 'o:t0', 'r1')).toEqual([1, 1, 0]);
      expect(await redis.exists(keys.lock)).toBe(1);
      expect(await release(keys, 'o:t0', 'r2')).toEqual([1, 0, 1]);
      expect(await redis.exists(keys.lock)).toBe(0);
      // Woken once: its next refusal registers it again.
      expect(await redis.exists(keys.clients)).toBe(0);
      await settle();
      expect(heard).toEqual(['w unlock']);
    });

    it('wakes no one when no client waits, and a try that does not wait registers nobody', async () => {
      const keys = fresh();
      const { heard, settle } = await listenAs(keys, 'w');
      await acquire(keys, 'o:t0', 10_000, 'a');
      expect((await acquire(keys, 'w:t1', 10_000, 'b', '0'))[0]).toBe(0);
      expect(await redis.exists(keys.clients)).toBe(0);
      expect(await release(keys, 'o:t0', 'r')).toEqual([1, 0, 0]);
      await settle();
      expect(heard).toEqual([]);
    });

    it('wakes clients in the order they registered, one per release, skipping those nobody listens for', async () => {
      const keys = fresh();
      const { heard, settle } = await listenAs(keys, 'a', 'b');
      await acquire(keys, 'o:t0', 10_000, 'h1');
      for (const client of ['a', 'gone', 'b', 'a']) await acquire(keys, `${client}:t`, 10_000, `x-${client}`);
      // A second refusal keeps the client's place.
      expect(await redis.zrange(keys.clients, '0', '-1')).toEqual(['a', 'gone', 'b']);
      const pttl = await redis.pttl(keys.clients);
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(CLIENTS_TTL);
      expect(await release(keys, 'o:t0', 'r1')).toEqual([1, 0, 1]);
      await acquire(keys, 'o:t0', 10_000, 'h2');
      // 'gone' listens nowhere: dropped, and 'b' woken in the same release.
      expect(await release(keys, 'o:t0', 'r2')).toEqual([1, 0, 1]);
      expect(await redis.exists(keys.clients)).toBe(0);
      await settle();
      expect(heard).toEqual(['a unlock', 'b unlock']);
    });

    it('registers the releasing client behind the others when its own tasks still wait', async () => {
      const keys = fresh();
      const { heard, settle } = await listenAs(keys, 'o', 'b');
      await acquire(keys, 'o:t1', 10_000, 'h1');
      await acquire(keys, 'b:t', 10_000, 'x');
      expect(await release(keys, 'o:t1', 'r1', { waiting: true })).toEqual([1, 0, 1]);
      expect(await redis.zrange(keys.clients, '0', '-1')).toEqual(['o']);
      await acquire(keys, 'b:t', 10_000, 'x2');
      // Nobody else waits: the releasing client's own waiters are woken.
      expect(await release(keys, 'b:t', 'r2')).toEqual([1, 0, 1]);
      await settle();
      expect(heard).toEqual(['b unlock', 'o unlock']);
    });

    it('refuses a wrong owner and changes nothing', async () => {
      const keys = fresh();
      await acquire(keys, 'o:t0', 10_000, 'a');
      const before = await redis.hgetall(keys.lock);
      expect(await release(keys, 'intruder:t0', 'r')).toEqual([-1, 1]);
      expect(await redis.hgetall(keys.lock)).toEqual(before);
      await redis.del(keys.lock);
      expect(await release(keys, 'o:t0', 'r2')).toEqual([-1, 0]);
    });

    it('does not release twice when the same op is replayed', async () => {
      const keys = fresh();
      for (const op of ['a1', 'a2', 'a3']) await acquire(keys, 'o:t0', 10_000, op);
      expect(await release(keys, 'o:t0', 'r1')).toEqual([1, 2, 0]);
      expect(await release(keys, 'o:t0', 'r1')).toEqual([1, 2, 0]);
      expect((await hold(keys.lock))?.count).toBe(2);
    });

    it('answers a replayed last release as released (no receivers), not as "not held", within the window', async () => {
      const keys = fresh();
      await acquire(keys, 'o:t0', 10_000, 'a1');
      expect(await release(keys, 'o:t0', 'final')).toEqual([1, 0, 0]);
      expect(await release(keys, 'o:t0', 'final')).toEqual([1, 0, 0]);
      const pttl = await redis.pttl(keys.released);
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(WINDOW);
    });

    it('releases every count with all, and only the hold with the given token', async () => {
      const keys = fresh();
      await acquire(keys, 'o:t0', 10_000, 'a1');
      await acquire(keys, 'o:t0', 10_000, 'a2');
      expect(await release(keys, 'o:t0', 'x', { all: true, token: '1' })).toEqual([-1, 1]);
      const token = (await hold(keys.lock))?.token ?? '';
      expect(await release(keys, 'o:t0', 'y', { all: true, token })).toEqual([1, 0, 0]);
      expect(await redis.exists(keys.lock)).toBe(0);
    });

    it('wakes with SPUBLISH when told the deployment is sharded', async () => {
      const keys = fresh();
      const listener = fleet.client(0);
      const messages: string[] = [];
      listener.on('smessage', (_channel: string, message: string) => messages.push(message));
      await listener.ssubscribe(`${keys.wakePrefix}w`);
      await acquire(keys, 'o:t0', 10_000, 'a');
      await acquire(keys, 'w:t', 10_000, 'b');
      expect(await release(keys, 'o:t0', 'r', { sharded: true })).toEqual([1, 0, 1]);
      await listener.ping().catch(() => undefined);
      expect(messages).toEqual(['unlock']);
    });
  });

  describe('wake', () => {
    it('passes a wake on to the next waiting client while the lock is free, never back to the caller', async () => {
      const keys = fresh();
      const { heard, settle } = await listenAs(keys, 'me', 'b');
      await acquire(keys, 'o:t0', 10_000, 'h');
      await acquire(keys, 'me:t', 10_000, 'x');
      await acquire(keys, 'b:t', 10_000, 'y');
      // Held: the holder's release wakes the next; nothing now.
      expect(await wake(keys, 'me')).toBe(0);
      expect(await redis.zrange(keys.clients, '0', '-1')).toEqual(['b']);
      await redis.del(keys.lock);
      expect(await wake(keys, 'me')).toBe(1);
      expect(await redis.exists(keys.clients)).toBe(0);
      await settle();
      expect(heard).toEqual(['b unlock']);
    });
  });

  describe('cancel', () => {
    it("undoes the hold's last acquire by its op, one count or all, and leaves a tombstone", async () => {
      const keys = fresh();
      await acquire(keys, 'o:t0', 10_000, 'a1');
      await acquire(keys, 'o:t0', 10_000, 'a2');
      expect(await cancel(keys, 'o:t0', 'c1', 'a1')).toBe(0); // not the last op: nothing undone
      expect((await hold(keys.lock))?.count).toBe(2);
      expect(await cancel(keys, 'o:t0', 'c2', 'a2')).toBe(1);
      expect((await hold(keys.lock))?.count).toBe(1);
      // The cancelled op, replayed, is refused rather than counted again.
      expect(await acquire(keys, 'o:t0', 10_000, 'a2')).toEqual([-1]);
      expect(await redis.hget(keys.cancelled, 'o:t0:a2')).toBe('1');
      const pttl = await redis.pttl(keys.cancelled);
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(WINDOW);
    });

    it('frees the lock when it undoes the only count, and wakes a waiting client', async () => {
      const keys = fresh();
      const { heard, settle } = await listenAs(keys, 'w');
      await acquire(keys, 'o:t0', 10_000, 'a1');
      await acquire(keys, 'o:t0', 10_000, 'a2');
      await acquire(keys, 'w:t', 10_000, 'b');
      expect(await cancel(keys, 'o:t0', 'c', 'a2', true)).toBe(1);
      expect(await redis.exists(keys.lock)).toBe(0);
      await settle();
      expect(heard).toEqual(['w unlock']);
    });

    it("touches no other owner's hold", async () => {
      const keys = fresh();
      await acquire(keys, 'other:t0', 10_000, 'x');
      expect(await cancel(keys, 'o:t0', 'c', 'x', true)).toBe(0);
      expect((await hold(keys.lock))?.owner).toBe('other:t0');
    });
  });

  describe('renew', () => {
    it('renews held leases, reports gone and taken ones, and never recreates a key', async () => {
      const held = fresh();
      const gone = fresh();
      const taken = fresh();
      const [, token] = await acquire(held, 'o:t0', 1_000, 'a');
      await acquire(taken, 'other:t0', 10_000, 'b');
      const items = [
        { key: held.lock, owner: 'o:t0', token: token as string, leaseMs: 20_000 },
        { key: gone.lock, owner: 'o:t0', token: '1', leaseMs: 20_000 },
        { key: taken.lock, owner: 'o:t0', token: '1', leaseMs: 20_000 },
      ];
      const codes = await run(SCRIPTS.lockRenew, { items });
      expect(codes).toEqual([1, 0, -1]);
      expect(await redis.pttl(held.lock)).toBeGreaterThan(19_000);
      expect(await redis.exists(gone.lock)).toBe(0);
      expect(await redis.pttl(taken.lock)).toBeLessThanOrEqual(10_000);
    });

    it('refuses a renewal carrying a stale token of the same owner', async () => {
      const keys = fresh();
      const [, stale] = await acquire(keys, 'o:t0', 1_000, 'a');
      await release(keys, 'o:t0', 'r');
      await acquire(keys, 'o:t0', 1_000, 'b');
      expect(await run(SCRIPTS.lockRenew, { items: [{ key: keys.lock, owner: 'o:t0', token: stale as string, leaseMs: 50_000 }] })).toEqual([-1]);
      expect(await redis.pttl(keys.lock)).toBeLessThanOrEqual(1_000);
    });
    it('reports a key holding another type as taken and still renews the rest of the batch', async () => {
      const held = fresh();
      const list = fresh();
      const text = fresh();
      const [, token] = await acquire(held, 'o:t0', 1_000, 'a');
      await redis.rpush(list.lock, 'x');
      await redis.set(text.lock, 'x');
      const items = [
        { key: list.lock, owner: 'o:t0', token: token as string, leaseMs: 20_000 },
        { key: held.lock, owner: 'o:t0', token: token as string, leaseMs: 20_000 },
        { key: text.lock, owner: 'o:t0', token: token as string, leaseMs: 20_000 },
      ];
      expect(await run(SCRIPTS.lockRenew, { items })).toEqual([-1, 1, -1]);
      expect(await redis.pttl(held.lock)).toBeGreaterThan(19_000);
      expect(await redis.pttl(list.lock)).toBe(-1);
      expect(await redis.get(text.lock)).toBe('x');
    });
  });

  describe('forceUnlock', () => {
    it('deletes a held lock and announces "force"; a free lock gives 0', async () => {
      const keys = fresh();
      const listener = fleet.client(0);
      const messages: string[] = [];
      listener.on('message', (_channel: string, message: string) => messages.push(message));
      await listener.subscribe(keys.channel);
      await acquire(keys, 'o:t0', 10_000, 'a');
      expect(await run(SCRIPTS.lockForceUnlock, { lock: keys.lock, sharded: '0', channel: keys.channel, notices: keys.notices })).toBe(1);
      expect(await redis.exists(keys.lock)).toBe(0);
      expect(await run(SCRIPTS.lockForceUnlock, { lock: keys.lock, sharded: '0', channel: keys.channel, notices: keys.notices })).toBe(0);
      await listener.ping();
      expect(messages).toEqual(['force']);
    });

    it("tells the holder on its client's notice channel, naming owner, token and key; with notices '' it tells nobody", async () => {
      const keys = fresh();
      const listener = fleet.client(0);
      const messages: [string, string][] = [];
      listener.on('message', (channel: string, message: string) => messages.push([channel, message]));
      await listener.subscribe(`${keys.notices}client1`);
      const [, token] = await acquire(keys, 'client1:t7', 10_000, 'a');
      expect(await run(SCRIPTS.lockForceUnlock, { lock: keys.lock, sharded: '0', channel: keys.channel, notices: keys.notices })).toBe(1);
      await acquire(keys, 'client1:t8', 10_000, 'b');
      expect(await run(SCRIPTS.lockForceUnlock, { lock: keys.lock, sharded: '0', channel: keys.channel, notices: '' })).toBe(1);
      await listener.ping();
      expect(messages).toEqual([[`${keys.notices}client1`, `forced client1:t7 ${String(token)} ${keys.lock}`]]);
    });
  });
});
