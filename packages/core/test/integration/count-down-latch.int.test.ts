import { ClientClosedError, InvalidArgumentError } from '@org/rlock-core';
import { RedisFleet } from '@org/rlock-testing';
import { fixture, startChild } from './child-processes.js';
import { ClientPool, commandCalls, eventually, uniquePrefix } from './support.js';

describe('RCountDownLatch', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  const subscribers = async (channel: string) => Number(((await fleet.client(0).pubsub('NUMSUB', channel)) as [string, number])[1]);

  describe('arguments', () => {
    it('refuses bad counts and options with InvalidArgumentError before any command', async () => {
      const client = pool.make(fleet.url(0));
      const latch = client.getCountDownLatch('args');
      const before = await commandCalls(fleet.client(0), 'evalsha');
      for (const bad of [0, -1, 2.5, Number.NaN, 2 ** 31, '3']) {
        await expect(latch.trySetCount(bad as number)).rejects.toBeInstanceOf(InvalidArgumentError);
      }
      await expect(latch.await({ waitMs: -5 })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(latch.await({ leaseMs: 5 } as never)).rejects.toThrow(/unknown option "leaseMs"/);
      expect(await commandCalls(fleet.client(0), 'evalsha')).toBe(before);
      expect(() => client.getCountDownLatch('{x}')).toThrow(InvalidArgumentError);
    });
  });

  describe('counting', () => {
    it('sets the count only when zero, counts down to zero, deletes the key there and can be set again', async () => {
      const client = pool.make(fleet.url(0));
      const latch = client.getCountDownLatch('count');
      expect(await latch.getCount()).toBe(0);
      expect(await latch.trySetCount(2)).toBe(true);
      expect(await latch.trySetCount(5)).toBe(false);
      expect(await latch.getCount()).toBe(2);
      expect(await latch.countDown()).toBe(1);
      expect(await latch.countDown()).toBe(0);
      expect(await client.redis.exists(`${client.options.keyPrefix}:{count}`)).toBe(0);
      expect(await latch.countDown()).toBe(0);
      expect(await latch.getCount()).toBe(0);
      expect(await latch.trySetCount(1)).toBe(true);
    });
  });

  describe('syncReplicas', () => {
    it('rejects a count-down no replica acknowledged, naming it, and counts it once when done again', async () => {
      const setup = pool.make(fleet.url(0));
      // A lone server has no replica: WAIT 1 gets 0 acknowledgements.
      const client = pool.make(fleet.url(0), { keyPrefix: setup.options.keyPrefix, commandTimeoutMs: 500, syncReplicas: { replicas: 1, timeoutMs: 50 } });
      await expect(client.getCountDownLatch('sync').trySetCount(2)).rejects.toThrow(/replicas acknowledged/);
      // The write happened (it cannot be undone: waiters may have seen it); the caller was told it could be lost.
      expect(await setup.getCountDownLatch('sync').getCount()).toBe(2);
      await expect(client.getCountDownLatch('sync').countDown()).rejects.toThrow(/replicas acknowledged/);
      expect(await setup.getCountDownLatch('sync').getCount()).toBe(1);
      expect(await setup.getCountDownLatch('sync').countDown()).toBe(0);
    });
  });

  describe('await', () => {
    it('returns true at once at zero, and false when waitMs runs out first', async () => {
      const client = pool.make(fleet.url(0));
      const latch = client.getCountDownLatch('await');
      expect(await latch.await()).toBe(true);
      await latch.trySetCount(1);
      expect(await latch.await({ waitMs: 0 })).toBe(false);
      const started = performance.now();
      expect(await latch.await({ waitMs: 150 })).toBe(false);
      expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    });

    it("rejects with the signal's reason on abort, and with ClientClosedError on close", async () => {
      const client = pool.make(fleet.url(0));
      const latch = client.getCountDownLatch('abort');
      await latch.trySetCount(1);
      const controller = new AbortController();
      const reason = new Error('enough');
      const aborted = expect(latch.await({ signal: controller.signal })).rejects.toBe(reason);
      controller.abort(reason);
      await aborted;
      const closed = expect(latch.await()).rejects.toBeInstanceOf(ClientClosedError);
      expect(await eventually(async () => (await subscribers(`${client.options.keyPrefix}:{abort}:zero`)) === 1, 2_000)).toBe(true);
      await client.close();
      await closed;
    });

    it('wakes every local awaiter by the zero message, reading once each after it', async () => {
      const waiting = pool.make(fleet.url(0));
      const counter = pool.make(fleet.url(0), { keyPrefix: waiting.options.keyPrefix });
      const latch = waiting.getCountDownLatch('local');
      await latch.trySetCount(2);
      const channel = `${waiting.options.keyPrefix}:{local}:zero`;
      const redis = fleet.client(0);
      const start = await commandCalls(redis, 'get');
      const awaiters = Array.from({ length: 10 }, () => latch.await());
      expect(await eventually(async () => (await subscribers(channel)) === 1, 2_000)).toBe(true);
      // Each awaiter reads twice (before and after the subscription), then sleeps (10 s cap).
      expect(await eventually(async () => (await commandCalls(redis, 'get')) - start >= 20, 2_000)).toBe(true);
      const readsBefore = await commandCalls(redis, 'get');
      expect(readsBefore - start).toBe(20);
      // INFO commandstats counts the GETs inside scripts too: countDown reads
      // its marker and the count (2). A count down that does not reach zero wakes nobody.
      await counter.getCountDownLatch('local').countDown();
      expect(await commandCalls(redis, 'get')).toBe(readsBefore + 2);
      const started = performance.now();
      await counter.getCountDownLatch('local').countDown();
      expect(await Promise.all(awaiters)).toEqual(Array(10).fill(true));
      expect(performance.now() - started).toBeLessThan(1_000);
      // One read per awaiter after the wake-up, none more.
      expect((await commandCalls(redis, 'get')) - readsBefore).toBe(2 + 2 + 10);
    });
  });

  describe('across processes', () => {
    it('wakes awaiters in several processes once, on zero, by pub/sub', async () => {
      const prefix = uniquePrefix();
      const client = pool.make(fleet.url(0), { keyPrefix: prefix });
      const latch = client.getCountDownLatch('gate');
      await latch.trySetCount(3);
      const processes = 3;
      const redis = fleet.client(0);
      const start = await commandCalls(redis, 'get');
      const children = Array.from({ length: processes }, () =>
        startChild(fixture('latch-awaiter.mjs'), { REDIS_URL: fleet.url(0), PREFIX: prefix, AWAITERS: '4' }),
      );
      const channel = `${prefix}:{gate}:zero`;
      expect(await eventually(async () => (await subscribers(channel)) === processes, 10_000)).toBe(true);
      // Each awaiter read twice (before and after its subscription) and sleeps now.
      expect(await eventually(async () => (await commandCalls(redis, 'get')) - start >= processes * 4 * 2, 10_000)).toBe(true);
      const readsBefore = await commandCalls(redis, 'get');
      expect(readsBefore - start).toBe(processes * 4 * 2);
      await latch.countDown();
      await latch.countDown();
      const started = performance.now();
      await latch.countDown();
      const codes = await Promise.all(children.map((child) => child.exited));
      // Far below the capped sleep (10 s): the one 'zero' message woke them.
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(codes).toEqual(Array(processes).fill(0));
      expect(children.map((child) => child.stdout.trim())).toEqual(Array(processes).fill('woke 4'));
      // One read per awaiter after the wake-up, none more (and the two GETs
      // inside each countDown, which INFO commandstats counts too).
      expect((await commandCalls(redis, 'get')) - readsBefore).toBe(3 * 2 + processes * 4);
    });
  });
});
