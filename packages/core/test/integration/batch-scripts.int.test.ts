import calculateSlot from 'cluster-key-slot';
import { Redis } from 'ioredis';
import { RedisFleet, evalScript } from '@org/rlock-testing';
import { SCRIPTS, parseHold, plainLockKeys, type PlainLockKeys } from '@org/rlock-core/internal';
import { uniquePrefix } from './support.js';

/**
 * Script-level tests of the lock's batch scripts (lock/acquireBatch.lua, lock/releaseBatch.lua): each item answers as
 * the single script would, and an item that fails fails alone.
 */
describe('lock batch scripts', () => {
  let fleet: RedisFleet;
  let redis: Redis;

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
    redis = fleet.client(0);
  });
  afterAll(() => fleet.stop());

  const fresh = (name = 'job'): PlainLockKeys => plainLockKeys(uniquePrefix(), name, 'o');
  const acquireItem = (keys: PlainLockKeys, owner: string, op: string) => ({
    lock: keys.lock,
    fence: keys.fence,
    cancelled: keys.cancelled,
    clients: keys.clients,
    owner,
    op,
  });
  const releaseItem = (keys: PlainLockKeys, owner: string, op: string) => ({
    lock: keys.lock,
    released: keys.released,
    clients: keys.clients,
    owner,
    op,
    token: '',
  });
  const acquireBatch = (items: ReturnType<typeof acquireItem>[]) =>
    evalScript(redis, SCRIPTS.lockAcquireBatch, { leaseMs: 10_000, once: '0', waitTtlMs: '0', items }) as Promise<unknown[]>;
  const releaseBatch = (items: ReturnType<typeof releaseItem>[]) =>
    evalScript(redis, SCRIPTS.lockReleaseBatch, { all: '0', replayWindowMs: 2_000, sharded: '0', requeueTtlMs: '0', items }) as Promise<unknown[]>;

  it('answers each item as acquire.lua would: a grant, a refusal, a reentry and a replay', async () => {
    const a = fresh('a');
    const b = fresh('b');
    const replies = await acquireBatch([
      acquireItem(a, 'c1:t1', 'op1'),
      acquireItem(a, 'c2:t1', 'op1'),
      acquireItem(a, 'c1:t1', 'op2'),
      acquireItem(a, 'c1:t1', 'op2'),
      acquireItem(b, 'c1:t2', 'op1'),
    ]);
    const token = replies[0] as string;
    expect(token).toMatch(/^\d+$/);
    const [refused, reentry, replay] = replies.slice(1, 4) as unknown[][];
    expect(refused?.[0]).toBe(0);
    expect(refused?.[2]).toBe('c1:t1');
    expect(reentry).toEqual([1, token, 2]);
    // The same op again counts once.
    expect(replay).toEqual([1, token, 2]);
    expect(replies[4]).toMatch(/^\d+$/);
    expect(parseHold(await redis.hgetall(a.lock))).toMatchObject({ owner: 'c1:t1', count: 2, token });
  });

  it('mints strictly increasing tokens for items on one fencing counter, with one TIME for the batch', async () => {
    const prefix = uniquePrefix();
    // Names in one hash slot share its fencing counter.
    const names: string[] = [];
    for (let i = 0; names.length < 6; i++) if (calculateSlot(`n${i}`) === calculateSlot('n0')) names.push(`n${i}`);
    const keys = names.map((name) => plainLockKeys(prefix, name, 'o'));
    expect(new Set(keys.map((k) => k.fence)).size).toBe(1);
    const replies = (await acquireBatch(keys.map((k, i) => acquireItem(k, `c1:t${i}`, 'op1')))) as string[];
    const tokens = replies.map((token) => BigInt(token));
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]! > tokens[i - 1]!).toBe(true);
    expect(await redis.get(keys[0]!.fence)).toBe(replies.at(-1));
  });

  it('fails an item whose key holds something else, alone: the items around it are granted', async () => {
    const good1 = fresh('g1');
    const bad = fresh('bad');
    const good2 = fresh('g2');
    await redis.set(bad.lock, 'not a hold');
    const replies = await acquireBatch([acquireItem(good1, 'c1:t1', 'op1'), acquireItem(bad, 'c1:t2', 'op1'), acquireItem(good2, 'c1:t3', 'op1')]);
    expect(replies[0]).toMatch(/^\d+$/);
    expect(replies[1]).toBeInstanceOf(Error);
    expect((replies[1] as Error).message).toMatch(/^WRONGTYPE/);
    expect(replies[2]).toMatch(/^\d+$/);
    expect(await redis.get(bad.lock)).toBe('not a hold');
    expect(await redis.exists(good1.lock, good2.lock)).toBe(2);
  });

  it("wakes the waiting clients of an item's lock and of no other, whether the batch's first look found waiting clients or not", async () => {
    const keys = [fresh('a'), fresh('b'), fresh('c')];
    await acquireBatch(keys.map((k, i) => acquireItem(k, `c1:t${i}`, 'op1')));
    // A client waits on b only; with nobody subscribed, the release pops it (dead) and answers 0 receivers.
    await redis.zadd(keys[1]!.clients, 1, 'c2');
    const replies = await releaseBatch(keys.map((k, i) => releaseItem(k, `c1:t${i}`, 'op2')));
    expect(replies).toEqual([0, 0, 0]);
    expect(await redis.exists(keys[1]!.clients)).toBe(0);
    expect(await redis.exists(...keys.map((k) => k.lock))).toBe(0);
  });

  it("refuses the second of two items on one free lock: the first's grant is seen, though the batch's first look found nothing", async () => {
    const a = fresh('a');
    const replies = await acquireBatch([acquireItem(a, 'c1:t1', 'op1'), acquireItem(a, 'c1:t2', 'op1'), acquireItem(fresh('b'), 'c1:t3', 'op1')]);
    expect(replies[0]).toMatch(/^\d+$/);
    expect((replies[1] as unknown[])[0]).toBe(0);
    expect((replies[1] as unknown[])[2]).toBe('c1:t1');
    expect(replies[2]).toMatch(/^\d+$/);
  });

  it('answers each release as release.lua would, a replayed full release as released, and fails a bad item alone', async () => {
    const a = fresh('a');
    const b = fresh('b');
    const bad = fresh('bad');
    await acquireBatch([acquireItem(a, 'c1:t1', 'op1'), acquireItem(b, 'c1:t2', 'op1')]);
    await redis.set(bad.lock, 'x');
    const replies = await releaseBatch([
      releaseItem(a, 'c1:t1', 'op2'),
      releaseItem(bad, 'c1:t3', 'op2'),
      releaseItem(a, 'c1:t1', 'op2'),
      releaseItem(b, 'c9:t9', 'op2'),
    ]);
    // Released (no receivers), an error, the replay of the same op (released again), not the owner's.
    expect(replies[0]).toBe(0);
    expect(replies[1]).toBeInstanceOf(Error);
    expect(replies[2]).toBe(0);
    expect(replies[3]).toEqual([-1, 1]);
    expect(await redis.exists(a.lock)).toBe(0);
    expect(await redis.exists(b.lock)).toBe(1);
  });
});
