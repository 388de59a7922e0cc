import type { Redis } from 'ioredis';
import { RedisFleet, evalScript } from '@org/rlock-testing';
import type { EmbeddedScript, LockKeys } from '@org/rlock-core/internal';
import { leaseLockKeys } from '../../src/lease-lock/keys.js';
import { SCRIPTS } from '../../src/lease-lock/scripts.generated.js';
import { uniquePrefix } from './support.js';

/**
 * Script-level tests of the lease lock a Redlock master holds: each script by
 * EVAL of its text with raw KEYS and ARGV (by name, in its header's order),
 * its raw reply checked against its header. Behaviour through the API is
 * tested in redlock*.int.test.ts.
 */
describe('lease lock scripts', () => {
  let fleet: RedisFleet;
  let redis: Redis;
  const run = <A>(script: EmbeddedScript<A>, args: NoInfer<A>) => evalScript(redis, script, args);
  const fresh = (): LockKeys => leaseLockKeys(uniquePrefix(), 'job');
  const WINDOW = 2_000;

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
    redis = fleet.client(0);
  });
  afterAll(() => fleet.stop());

  it('are registered under the SHA1 the generator computed', async () => {
    for (const script of Object.values(SCRIPTS)) {
      expect(await redis.script('LOAD', script.lua)).toBe(script.sha);
    }
  });

  describe('acquire, release, cancel, renew', () => {
    const take = (keys: LockKeys, holder: string, leaseMs: number) =>
      run(SCRIPTS.leaseLockAcquire, { lock: keys.lock, cancelled: keys.cancelled, holder, leaseMs });
    const give = (keys: LockKeys, owner: string, token: string, op: string) =>
      run(SCRIPTS.leaseLockRelease, { lock: keys.lock, released: keys.released, owner, token, op, replayWindowMs: WINDOW, channel: keys.channel });
    const undo = (keys: LockKeys, holder: string) =>
      run(SCRIPTS.leaseLockCancel, { lock: keys.lock, cancelled: keys.cancelled, holder, replayWindowMs: WINDOW, channel: keys.channel });
    const listen = async (keys: LockKeys): Promise<{ messages: string[]; settle: () => Promise<unknown> }> => {
      const listener = fleet.client(0);
      const messages: string[] = [];
      listener.on('message', (_channel: string, message: string) => messages.push(message));
      await listener.subscribe(keys.channel);
      return { messages, settle: () => listener.ping() };
    };

    it('grants a free lock as one string <owner>|<op> with the lease as TTL, and answers a replay of that op as granted', async () => {
      const keys = fresh();
      expect(await take(keys, 'c:t1|a1', 10_000)).toBe(1);
      expect(await redis.get(keys.lock)).toBe('c:t1|a1');
      const pttl = await redis.pttl(keys.lock);
      expect(pttl).toBeGreaterThan(9_000);
      expect(pttl).toBeLessThanOrEqual(10_000);
      expect(await take(keys, 'c:t1|a1', 50_000)).toBe(1);
      expect(await redis.pttl(keys.lock)).toBeLessThanOrEqual(10_000);
    });

    it("refuses any other value, the same owner's other op included, with the TTL and the holder, and changes nothing", async () => {
      const keys = fresh();
      await take(keys, 'c:t1|a1', 10_000);
      for (const holder of ['c:t2|b1', 'c:t1|a2']) {
        const [ttl, held] = (await take(keys, holder, 50_000)) as [number, string];
        expect(ttl).toBeGreaterThan(9_000);
        expect(ttl).toBeLessThanOrEqual(10_000);
        expect(held).toBe('c:t1|a1');
      }
      expect(await redis.get(keys.lock)).toBe('c:t1|a1');
    });

    it('cancels an acquire that ran (deleted, announced) and refuses one that comes after its cancel', async () => {
      const ran = fresh();
      const { messages, settle } = await listen(ran);
      await take(ran, 'o|a', 10_000);
      expect(await undo(ran, 'o|a')).toBe(1);
      expect(await redis.exists(ran.lock)).toBe(0);
      expect(await take(ran, 'o|a', 10_000)).toBe(-1);
      expect(await redis.exists(ran.lock)).toBe(0);
      await settle();
      expect(messages).toEqual(['unlock']);
      const late = fresh();
      expect(await undo(late, 'o|b')).toBe(0);
      expect(await take(late, 'o|b', 10_000)).toBe(-1);
      expect(await redis.exists(late.lock)).toBe(0);
      const tombstones = await redis.pttl(late.cancelled);
      expect(tombstones).toBeGreaterThan(0);
      expect(tombstones).toBeLessThanOrEqual(WINDOW);
      // A new op of the same owner is not refused.
      expect(await take(late, 'o|c', 10_000)).toBe(1);
    });

    it("leaves another op's hold alone on a cancel", async () => {
      const keys = fresh();
      await take(keys, 'o|kept', 10_000);
      expect(await undo(keys, 'o|other')).toBe(0);
      expect(await redis.get(keys.lock)).toBe('o|kept');
    });

    it('releases by owner and token, announcing to the receivers; "" releases the owner\'s hold whatever its op', async () => {
      const keys = fresh();
      const { messages, settle } = await listen(keys);
      await take(keys, 'o|a', 10_000);
      expect(await give(keys, 'o', 'a', 'r1')).toBe(1);
      expect(await redis.exists(keys.lock)).toBe(0);
      await take(keys, 'o|b', 10_000);
      expect(await give(keys, 'o', '', 'r2')).toBe(1);
      expect(await redis.exists(keys.lock)).toBe(0);
      await settle();
      expect(messages).toEqual(['unlock', 'unlock']);
    });

    it('refuses another owner, a stale token and a prefix of the owner, telling "taken" from "gone", and changes nothing', async () => {
      const keys = fresh();
      await take(keys, 'c:1|a', 10_000);
      expect(await give(keys, 'c:2', 'a', 'r1')).toBe(-2);
      expect(await give(keys, 'c:1', 'old', 'r2')).toBe(-2);
      expect(await give(keys, 'c:', '', 'r3')).toBe(-2);
      expect(await redis.get(keys.lock)).toBe('c:1|a');
      expect(await give(fresh(), 'c:1', 'a', 'r4')).toBe(-1);
    });

    it('answers a replayed release as released with no receivers, within the window, and only for that op', async () => {
      const keys = fresh();
      await take(keys, 'o|a', 10_000);
      expect(await give(keys, 'o', 'a', 'r1')).toBe(0);
      expect(await give(keys, 'o', 'a', 'r1')).toBe(0);
      expect(await give(keys, 'o', 'a', 'r2')).toBe(-1);
      const marker = await redis.pttl(keys.released);
      expect(marker).toBeGreaterThan(0);
      expect(marker).toBeLessThanOrEqual(WINDOW);
    });

    it('renews held leases, reports gone and taken ones, never shortens a TTL and never recreates a key', async () => {
      const held = fresh();
      const gone = fresh();
      const taken = fresh();
      const longer = fresh();
      await take(held, 'o|a', 1_000);
      await take(taken, 'o|b', 10_000);
      await take(longer, 'o|c', 60_000);
      const items = [
        { lock: held.lock, holder: 'o|a', leaseMs: 20_000 },
        { lock: gone.lock, holder: 'o|a', leaseMs: 20_000 },
        { lock: taken.lock, holder: 'o|stale', leaseMs: 20_000 },
        { lock: longer.lock, holder: 'o|c', leaseMs: 20_000 },
      ];
      const codes = await run(SCRIPTS.leaseLockRenew, { items });
      expect(codes).toEqual([1, 0, -1, 1]);
      expect(await redis.pttl(held.lock)).toBeGreaterThan(19_000);
      expect(await redis.exists(gone.lock)).toBe(0);
      expect(await redis.pttl(taken.lock)).toBeLessThanOrEqual(10_000);
      expect(await redis.pttl(longer.lock)).toBeGreaterThan(50_000);
    });
  });
});
