import { RedisFleet, overlapOfTasks } from '@org/rlock-testing';
import { ClientClosedError, InvalidArgumentError, LockAcquireTimeoutError, LockLostError, SPIN_LOCK_DEFAULTS, type RLockClient } from '@org/rlock-core';
import { plainLockKeys } from '@org/rlock-core/internal';
import { runChild, fixture } from './child-processes.js';
import { ClientPool, commandCalls, eventually, uniquePrefix } from './support.js';

describe('SpinLock', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();
  let client: RLockClient;
  /** The key prefix of `client`, and of the other clients a test makes to share its objects. */
  let prefix: string;

  beforeAll(async () => void (fleet = await RedisFleet.start({ size: 1 })));
  beforeEach(() => {
    prefix = uniquePrefix();
    client = pool.make(fleet.url(0), { keyPrefix: prefix });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  /** Scripts the server ran so far (EVALSHA, and EVAL where a script was not loaded yet). */
  const scriptCalls = async (): Promise<number> => (await commandCalls(fleet.client(0), 'evalsha')) + (await commandCalls(fleet.client(0), 'eval'));

  /** Channels subscribed on the server whose names hold `text`. */
  const channelsWith = async (text: string): Promise<string[]> =>
    ((await fleet.client(0).pubsub('CHANNELS', '*')) as string[]).filter((channel) => channel.includes(text));

  /** Holds `name` from another client (a fixed lease, nothing renewed) until the returned release runs. */
  async function heldElsewhere(name: string): Promise<() => Promise<void>> {
    const other = pool.make(fleet.url(0), { keyPrefix: prefix });
    const handle = await other.getLock(name).acquire({ leaseMs: 60_000 });
    return () => handle.unlock();
  }

  describe('exclusion', () => {
    it('never lets 8 tasks of one process overlap over 160 acquisitions', async () => {
      const lock = client.getSpinLock('tasks');
      const probe = await overlapOfTasks(client, lock, 8, 20);
      expect(probe.entries).toBe(8 * 20);
      expect(probe.maxInside).toBe(1);
    });

    it('never lets tasks of several processes overlap, spin locks and locks of one name alike, and the shared counter equals the increments', async () => {
      // Two processes spin, two wait on the channel: one lock, whichever way its waiters wait.
      await Promise.all(
        ['spin', 'spin', '', ''].map((kind, worker) =>
          runChild(fixture('counter-worker.mjs'), { REDIS_URL: fleet.url(0), PREFIX: prefix, TASKS: '3', ROUNDS: '15', WORKER: String(worker), KIND: kind }),
        ),
      );
      const redis = fleet.client(0);
      expect(Number(await redis.get(`${prefix}:data:counter`))).toBe(4 * 3 * 15);
      expect(Number((await redis.get(`${prefix}:data:overlaps`)) ?? 0)).toBe(0);
    });

    it('is the lock of its name: a lock of the name excludes it, and a task holding either reenters through the other', async () => {
      const spin = client.getSpinLock('shared');
      const plain = client.getLock('shared');
      await client.task(async () => {
        await spin.lock({ leaseMs: 10_000 });
        await plain.lock({ leaseMs: 10_000 });
        expect(await spin.getHoldCount()).toBe(2);
        await plain.unlock();
        await spin.unlock();
        expect(await plain.isLocked()).toBe(false);
      });
      const release = await heldElsewhere('shared');
      await client.task(async () => expect(await spin.tryLock({ leaseMs: 10_000 })).toBe(false));
      await release();
      await client.task(async () => {
        expect(await spin.tryLock({ leaseMs: 10_000 })).toBe(true);
        await spin.unlock();
      });
    });
  });

  describe('waiting', () => {
    it('never subscribes to wait, and its refused tries register no waiting client', async () => {
      const spinning = pool.make(fleet.url(0), { keyPrefix: prefix });
      const release = await heldElsewhere('quiet');
      const lock = spinning.getSpinLock('quiet');
      // A first refused try: the client's notice channel (about its holds, not its waits) is subscribed by then.
      await spinning.task(async () => expect(await lock.tryLock({ leaseMs: 10_000 })).toBe(false));
      const subscribes = await commandCalls(fleet.client(0), 'subscribe');
      const waiting = lock.acquire({ leaseMs: 10_000 });
      const scriptsBefore = await scriptCalls();
      expect(await eventually(async () => (await scriptCalls()) > scriptsBefore + 3, 10_000)).toBe(true);
      expect(await channelsWith(':{quiet}')).toEqual([]);
      expect(await fleet.client(0).zcard(plainLockKeys(prefix, 'quiet', '').clients)).toBe(0);
      await release();
      const handle = await waiting;
      expect(await commandCalls(fleet.client(0), 'subscribe')).toBe(subscribes);
      await handle.unlock();
    });

    it('bounds its tries per second by its back-off while it waits (defaults, and a fixed delay)', async () => {
      const spinning = pool.make(fleet.url(0), { keyPrefix: prefix });
      const release = await heldElsewhere('busy');
      const waitMs = 1_000;
      const triesOver = async (options?: Parameters<RLockClient['getSpinLock']>[1]): Promise<number> => {
        const before = await scriptCalls();
        await spinning.task(() =>
          expect(spinning.getSpinLock('busy', options).lock({ leaseMs: 10_000, waitMs })).rejects.toBeInstanceOf(LockAcquireTimeoutError),
        );
        return (await scriptCalls()) - before;
      };
      // Defaults: the n-th wait is at least min(maxDelayMs, 2^n) / 2 ms, so at most 6 tries in the first 63 ms, then one per 64 ms at most.
      const { initialDelayMs, maxDelayMs } = SPIN_LOCK_DEFAULTS;
      expect(initialDelayMs).toBe(1);
      expect(maxDelayMs).toBe(128);
      const byDefault = await triesOver();
      expect(byDefault).toBeGreaterThanOrEqual(2);
      expect(byDefault).toBeLessThanOrEqual(1 + 6 + Math.ceil(waitMs / 64));
      // A fixed 100 ms: at most one try per 100 ms after the first.
      const fixed = await triesOver({ initialDelayMs: 100, maxDelayMs: 100 });
      expect(fixed).toBeGreaterThanOrEqual(2);
      expect(fixed).toBeLessThanOrEqual(1 + waitMs / 100);
      await release();
    });

    it('gives up by waitMs, and at once when aborted or when its client closes, leaving nothing held', async () => {
      const spinning = pool.make(fleet.url(0), { keyPrefix: prefix });
      const release = await heldElsewhere('bounded');
      // Each refusal is followed by a 30 s wait: only the bounds below end these calls sooner.
      const lock = spinning.getSpinLock('bounded', { initialDelayMs: 30_000, maxDelayMs: 30_000 });
      const startedAt = performance.now();
      await spinning.task(() => expect(lock.lock({ leaseMs: 10_000, waitMs: 150 })).rejects.toBeInstanceOf(LockAcquireTimeoutError));
      expect(performance.now() - startedAt).toBeLessThan(15_000);

      /** Called before a call starts; what it returns resolves once that call's first try ran (refused: it sleeps now). */
      const refused = async (): Promise<() => Promise<void>> => {
        const before = await scriptCalls();
        return async () => expect(await eventually(async () => (await scriptCalls()) > before, 10_000)).toBe(true);
      };
      const controller = new AbortController();
      const abortedAfter = await refused();
      const aborted = spinning.task(() => lock.lock({ leaseMs: 10_000, signal: controller.signal }));
      await abortedAfter();
      const reason = new Error('stop');
      controller.abort(reason);
      await expect(aborted).rejects.toBe(reason);

      const closedAfter = await refused();
      const closing = spinning.task(() => lock.lock({ leaseMs: 10_000 }));
      await closedAfter();
      await spinning.close();
      await expect(closing).rejects.toBeInstanceOf(ClientClosedError);
      await release();
      expect(await client.getLock('bounded').isLocked()).toBe(false);
    });
  });

  describe('holds', () => {
    it('hands out growing fencing tokens, whichever kind of the name took it', async () => {
      const tokens: bigint[] = [];
      for (let i = 0; i < 10; i++) {
        const lock = i % 2 === 0 ? client.getSpinLock('fenced') : client.getLock('fenced');
        const handle = await lock.acquire({ leaseMs: 10_000 });
        tokens.push(BigInt(handle.token));
        await handle.unlock();
      }
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1] as bigint);
    });

    it('reports a hold lost when the lock is force-unlocked', async () => {
      const handle = await client.getSpinLock('lost').acquire({ leaseMs: 10_000 });
      expect(await pool.make(fleet.url(0), { keyPrefix: prefix }).getSpinLock('lost').forceUnlock()).toBe(true);
      expect(await eventually(() => handle.signal.reason instanceof LockLostError, 10_000)).toBe(true);
    });

    it('is read as a lock by inspect, and as a spin lock when asked', async () => {
      const handle = await client.getSpinLock('order:9').acquire({ leaseMs: 10_000 });
      expect(await client.inspect('order:9')).toMatchObject({ kind: 'lock', holderCount: 1 });
      expect(await client.inspect('order:9', { kind: 'spinLock' })).toMatchObject({ kind: 'spinLock', holders: [{ count: 1, token: handle.token }] });
      await handle.unlock();
    });
  });

  it('refuses bad options and names before anything is sent', () => {
    expect(() => client.getSpinLock('x', { initialDelayMs: 0 })).toThrow(InvalidArgumentError);
    expect(() => client.getSpinLock('x', { initialDelayMs: 50, maxDelayMs: 10 })).toThrow(InvalidArgumentError);
    expect(() => client.getSpinLock('x', { multiplier: 0.5 })).toThrow(InvalidArgumentError);
    expect(() => client.getSpinLock('x', { backoff: 1 } as never)).toThrow(InvalidArgumentError);
    expect(() => client.getSpinLock('')).toThrow(InvalidArgumentError);
  });
});
