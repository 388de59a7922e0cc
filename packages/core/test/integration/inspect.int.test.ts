import { InvalidArgumentError, type ObjectInfo, type RLockClient } from '@org/rlock-core';
import { SCRIPTS } from '@org/rlock-core/internal';
import { RedisFleet, takeHoldLeakWarnings, uniquePrefix } from '@org/rlock-testing';
import { ClientPool, commandCalls, eventually } from './support.js';

/**
 * inspect() and list() read the public data layout of every kind of object,
 * read-only and bounded; list() finds objects with SCAN, never KEYS.
 */
describe('inspect', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();
  const aborts: AbortController[] = [];

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(async () => {
    for (const controller of aborts.splice(0)) controller.abort();
    await pool.closeAll();
  });
  afterAll(() => fleet.stop());

  /** Starts a wait that the test ends in afterEach (its rejection is expected). */
  function waitInBackground(start: (signal: AbortSignal) => Promise<unknown>): void {
    const controller = new AbortController();
    aborts.push(controller);
    start(controller.signal).catch(() => undefined);
  }

  const ownerPattern = (client: RLockClient) => new RegExp(`^${client.clientId}:`);

  describe('client.inspect()', () => {
    it('reads a reentrant lock: owner, hold count, token, lease left, when it was taken', async () => {
      const client = pool.make(fleet.url(0));
      let token: string | undefined;
      await client.task(async () => {
        const lock = client.getLock('order:1');
        await lock.lock({ leaseMs: 10_000 });
        await lock.lock({ leaseMs: 10_000 });
        token = (await client.inspect('order:1'))?.holders[0]?.token;
      });
      expect(takeHoldLeakWarnings()).toMatchObject([{ name: 'order:1', count: 2 }]);
      const info = await client.inspect('order:1');
      expect(info).toMatchObject({ kind: 'lock', name: 'order:1', key: `${client.options.keyPrefix}:{order:1}`, holderCount: 1 });
      const holder = info?.holders[0];
      expect(holder?.owner).toMatch(ownerPattern(client));
      expect(holder?.count).toBe(2);
      expect(holder?.token).toBe(token);
      expect(holder?.ttlMs).toBeGreaterThan(5_000);
      expect(holder?.ttlMs).toBeLessThanOrEqual(10_000);
      expect(Math.abs((holder?.acquiredAtMs ?? 0) - (info?.serverTimeMs ?? 0))).toBeLessThan(5_000);
    });

    it('answers undefined for an object without a key', async () => {
      const client = pool.make(fleet.url(0));
      expect(await client.inspect('nothing-here')).toBeUndefined();
      expect(await client.inspect('nothing-here', { kind: 'countDownLatch' })).toBeUndefined();
    });

    it('reads a fair lock: its holder and the queue in arrival order', async () => {
      const holderClient = pool.make(fleet.url(0));
      const keyPrefix = holderClient.options.keyPrefix;
      const first = pool.make(fleet.url(0), { keyPrefix });
      const second = pool.make(fleet.url(0), { keyPrefix });
      await holderClient.getFairLock('payout').acquire({ leaseMs: 20_000 });
      waitInBackground((signal) => first.getFairLock('payout').acquire({ leaseMs: 1_000, signal }));
      expect(await eventually(async () => (await holderClient.inspect('payout'))?.kind === 'fairLock', 5_000)).toBe(true);
      waitInBackground((signal) => second.getFairLock('payout').acquire({ leaseMs: 1_000, signal }));
      expect(await eventually(async () => waiterCount(await holderClient.inspect('payout')) === 2, 5_000)).toBe(true);
      const info = await holderClient.inspect('payout');
      if (info?.kind !== 'fairLock') throw new Error(`expected a fair lock, got ${info?.kind}`);
      expect(info.holders[0]?.owner).toMatch(ownerPattern(holderClient));
      expect(info.waiters.map((waiter) => waiter.owner.split(':')[0])).toEqual([first.clientId, second.clientId]);
      for (const waiter of info.waiters) expect(waiter.ttlMs).toBeGreaterThan(0);
      // A limit bounds the list, not the count.
      const bounded = await holderClient.inspect('payout', { limit: 1 });
      expect(bounded).toMatchObject({ kind: 'fairLock', waiterCount: 2 });
      if (bounded?.kind !== 'fairLock') throw new Error(`expected a fair lock, got ${bounded?.kind}`);
      // The queue's head, in arrival order, whichever waiter lease ends first.
      expect(bounded.waiters.map((waiter) => waiter.owner.split(':')[0])).toEqual([first.clientId]);
    });

    it('tells a fair lock nobody waits for when asked for one', async () => {
      const client = pool.make(fleet.url(0));
      await client.getFairLock('quiet').acquire({ leaseMs: 10_000 });
      expect((await client.inspect('quiet'))?.kind).toBe('lock');
      expect(await client.inspect('quiet', { kind: 'fairLock' })).toMatchObject({ kind: 'fairLock', waiters: [], waiterCount: 0 });
    });

    it('reads a read-write lock: readers with their own leases and tokens, a waiting writer, then the writer', async () => {
      const client = pool.make(fleet.url(0));
      const other = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
      const rw = client.getReadWriteLock('doc');
      const readers = [];
      for (let i = 0; i < 3; i++) readers.push(await rw.readLock().acquire({ leaseMs: 10_000 + i * 1_000 }));
      waitInBackground((signal) => other.getReadWriteLock('doc').writeLock().acquire({ leaseMs: 1_000, signal }));
      expect(await eventually(async () => waiterCount(await client.inspect('doc')) === 1, 5_000)).toBe(true);
      const info = await client.inspect('doc', { limit: 2 });
      if (info?.kind !== 'readWriteLock') throw new Error(`expected a read-write lock, got ${info?.kind}`);
      expect(info.mode).toBe('read');
      expect(info.holderCount).toBe(3);
      expect(info.holders).toHaveLength(2);
      expect(info.holders.map((holder) => holder.mode)).toEqual(['read', 'read']);
      // Soonest lease end first: the first reader's.
      expect(info.holders[0]?.token).toBe(readers[0]?.token);
      expect(info.holders[1]?.token).toBe(readers[1]?.token);
      expect(info.holders[0]?.ttlMs).toBeLessThan(info.holders[1]?.ttlMs ?? 0);
      expect(info.waiters[0]?.owner).toMatch(ownerPattern(other));
      for (const reader of readers) await reader.unlock();

      const writer = await rw.writeLock().acquire({ leaseMs: 10_000 });
      const written = await client.inspect('doc');
      expect(written).toMatchObject({ kind: 'readWriteLock', mode: 'write', holderCount: 1 });
      expect(written?.holders[0]).toMatchObject({ mode: 'write', count: 1, token: writer.token });
    });

    it('names a semaphore, a latch and a permit pool with no permit leased, all a bare integer, by their kind markers', async () => {
      const client = pool.make(fleet.url(0));
      const semaphore = client.getSemaphore('quota');
      await semaphore.trySetPermits(5);
      await semaphore.acquire(2);
      expect(await client.inspect('quota')).toMatchObject({ kind: 'semaphore', permits: 3, holders: [], holderCount: 0 });
      // The marker wins over a kind asked for.
      expect(await client.inspect('quota', { kind: 'countDownLatch' })).toMatchObject({ kind: 'semaphore', permits: 3 });
      // A semaphore given its permits by addPermits is marked too; one made by release() alone is not (a release stays one write).
      await client.getSemaphore('spare').addPermits(2);
      expect(await client.inspect('spare')).toMatchObject({ kind: 'semaphore', permits: 2 });
      await client.getSemaphore('released').release(2);
      expect(await client.inspect('released')).toMatchObject({ kind: 'semaphoreOrLatch', value: 2 });

      const latch = client.getCountDownLatch('batch');
      await latch.trySetCount(3);
      await latch.countDown();
      expect(await client.inspect('batch')).toMatchObject({ kind: 'countDownLatch', count: 2 });
      await latch.countDown();
      await latch.countDown();
      expect(await client.inspect('batch')).toBeUndefined();
      // Zero deletes the marker with the count: nothing is left behind.
      expect(await fleet.client(0).exists(`${client.options.keyPrefix}:{batch}:kind`)).toBe(0);

      const permits = client.getPermitExpirableSemaphore('pool');
      await permits.trySetPermits(4);
      expect(await client.inspect('pool')).toMatchObject({ kind: 'permitExpirableSemaphore', permits: 4, holderCount: 0 });
      await (await permits.acquire({ leaseMs: 10_000 })).release();
      expect(await client.inspect('pool')).toMatchObject({ kind: 'permitExpirableSemaphore', permits: 4, holderCount: 0 });
      await client.getPermitExpirableSemaphore('grown').addPermits(1);
      expect(await client.inspect('grown')).toMatchObject({ kind: 'permitExpirableSemaphore', permits: 1 });
    });

    it('reads a bare integer without a kind marker (written by hand) as semaphoreOrLatch, or by the kind asked for', async () => {
      const client = pool.make(fleet.url(0));
      await fleet.client(0).set(`${client.options.keyPrefix}:{counter}`, '3');
      expect(await client.inspect('counter')).toMatchObject({ kind: 'semaphoreOrLatch', value: 3, holders: [], holderCount: 0 });
      expect(await client.inspect('counter', { kind: 'semaphore' })).toMatchObject({ kind: 'semaphore', permits: 3 });
      expect(await client.inspect('counter', { kind: 'countDownLatch' })).toMatchObject({ kind: 'countDownLatch', count: 3 });
      expect(await client.inspect('counter', { kind: 'permitExpirableSemaphore' })).toMatchObject({ kind: 'permitExpirableSemaphore', permits: 3 });
    });

    it('reads a permit-expirable semaphore: available permits and each leased permit with its id and token', async () => {
      const client = pool.make(fleet.url(0));
      const semaphore = client.getPermitExpirableSemaphore('gpu');
      await semaphore.trySetPermits(3);
      const a = await semaphore.acquire({ leaseMs: 10_000 });
      const b = await semaphore.acquire({ leaseMs: 20_000 });
      const info = await client.inspect('gpu');
      if (info?.kind !== 'permitExpirableSemaphore') throw new Error(`expected permits, got ${info?.kind}`);
      expect(info.permits).toBe(1);
      expect(info.holderCount).toBe(2);
      expect(info.holders.map((holder) => [holder.id, holder.token, holder.owner, holder.count])).toEqual([
        [a.id, a.token, client.clientId, 1],
        [b.id, b.token, client.clientId, 1],
      ]);
      // A lapsed permit counts as available (the next call reclaims it), and is no longer listed.
      const short = await semaphore.acquire({ leaseMs: 50 });
      expect(await eventually(async () => ((await client.inspect('gpu')) as { permits: number }).permits === 1, 3_000)).toBe(true);
      expect((await client.inspect('gpu'))?.holders.map((holder) => holder.id)).not.toContain(short.id);
    });

    it("reports another program's key under the prefix as unknown", async () => {
      const client = pool.make(fleet.url(0));
      await fleet.client(0).rpush(`${client.options.keyPrefix}:{foreign}`, 'x');
      expect(await client.inspect('foreign')).toMatchObject({ kind: 'unknown', redisType: 'list' });
      // A string with a bar is a Redlock master's lease lock only as `<clientId>:<taskId>|<op>`.
      await fleet.client(0).set(`${client.options.keyPrefix}:{piped}`, 'a|b');
      expect(await client.inspect('piped')).toMatchObject({ kind: 'unknown', redisType: 'string' });
    });

    it('refuses a bad name or option before sending anything', async () => {
      const client = pool.make(fleet.url(0));
      await expect(client.inspect('a{b}')).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(client.inspect('a', { limit: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(client.inspect('a', { kind: 'mutex' as never })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(client.inspect('a', { limt: 3 } as never)).rejects.toThrow(/unknown option "limt"/);
    });
  });

  describe('read.lua', () => {
    it('reads each key by its type, and a key read by another only at the members that one listed, bounded by the limit', async () => {
      const redis = fleet.client(0);
      const main = `${uniquePrefix()}:{x}`;
      const [seconds] = await redis.time();
      const later = (ms: number): number => Number(seconds) * 1000 + 60_000 + ms;
      await redis.hset(main, 'a', '1');
      await redis.rpush(`${main}:queue`, 'm3', 'm1', 'm2');
      await redis.zadd(`${main}:leases`, later(10), 'm1', later(20), 'm2', 1, 'm3', later(5), 'm4');
      await redis.hset(`${main}:tokens`, 'm1', 't1', 'm2', 't2', 'm4', 't4', 'm9', 't9');
      await redis.set(`${main}:count`, '7');
      const args = SCRIPTS.inspectRead.args({
        limit: 2,
        items: [
          { key: main, by: '' },
          { key: `${main}:queue`, by: '' },
          { key: `${main}:leases`, by: '' },
          { key: `${main}:leases`, by: 2 },
          { key: `${main}:tokens`, by: 3 },
          { key: `${main}:count`, by: '' },
          { key: `${main}:absent`, by: '' },
        ],
      });
      const [now, ...reads] = (await redis.eval(SCRIPTS.inspectRead.lua, ...(args as [number, ...string[]]))) as [number, ...unknown[]];
      expect(now).toBeGreaterThan(0);
      expect(reads).toEqual([
        ['hash', -1, 'a', '1'],
        ['list', -1, 'm3', 'm1'],
        ['zset', -1, 3, 1, 'm4', String(later(5)), 'm1', String(later(10))],
        // The live ones of the queue's first two, in its order (m3's lease ended).
        ['zset', -1, 3, 1, 'm1', later(10)],
        // The fields of the members the whole read listed, not m2 or m9.
        ['hash', -1, 'm4', 't4', 'm1', 't1'],
        ['string', -1, '7'],
        ['none', -2],
      ]);
    });
  });

  describe('client.list()', () => {
    it('pages through the objects matching a glob with SCAN, never KEYS', async () => {
      const client = pool.make(fleet.url(0));
      for (let i = 1; i <= 5; i++) await client.getLock(`order:${i}`).acquire({ leaseMs: 10_000 });
      await client.getLock('invoice:1').acquire({ leaseMs: 10_000 });
      await client.getSemaphore('order:quota').trySetPermits(2);
      const redis = fleet.client(0);
      const keysBefore = await commandCalls(redis, 'keys');
      const scansBefore = await commandCalls(redis, 'scan');

      const pages: ObjectInfo[][] = [];
      for await (const page of client.list({ match: 'order:*', limit: 2 })) pages.push(page);
      const names = pages.flat().map((info) => info.name);
      expect(new Set(names)).toEqual(new Set(['order:1', 'order:2', 'order:3', 'order:4', 'order:5', 'order:quota']));
      for (const page of pages) expect(page.length).toBeLessThanOrEqual(2);
      expect(pages.flat().find((info) => info.name === 'order:3')).toMatchObject({ kind: 'lock', holderCount: 1 });
      expect(pages.flat().find((info) => info.name === 'order:quota')).toMatchObject({ kind: 'semaphore', permits: 2 });
      expect(await commandCalls(redis, 'keys')).toBe(keysBefore);
      expect(await commandCalls(redis, 'scan')).toBeGreaterThan(scansBefore);
    });

    it('lists nothing but main keys (no queue, fence or marker keys), and stops on its signal', async () => {
      const client = pool.make(fleet.url(0));
      const held = await client.getLock('solo').acquire({ leaseMs: 10_000 });
      await held.unlock();
      await client.getFairLock('solo').acquire({ leaseMs: 10_000 });
      const all: ObjectInfo[] = [];
      for await (const page of client.list()) all.push(...page);
      expect(all.map((info) => info.name)).toEqual(['solo']);

      const controller = new AbortController();
      controller.abort(new Error('stop'));
      const iterator = client.list({ signal: controller.signal });
      await expect(iterator.next()).rejects.toThrow('stop');
    });

    it('refuses a glob with braces', async () => {
      const client = pool.make(fleet.url(0));
      await expect(client.list({ match: 'a}*' }).next()).rejects.toBeInstanceOf(InvalidArgumentError);
    });
  });
});

function waiterCount(info: ObjectInfo | undefined): number {
  return info && 'waiterCount' in info ? info.waiterCount : -1;
}
