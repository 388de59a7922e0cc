import { RedisFleet, takeHoldLeakWarnings } from '@org/rlock-testing';
import { LockLostError } from '@org/rlock';
import { holdFields, parseHold } from '@org/rlock-core/internal';
import { ClientPool, HolderProcess, eventually, sleep, uniquePrefix } from './support.js';

describe('Watchdog', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  describe('renewal', () => {
    it('keeps a job running 5x watchdogTimeoutMs locked while another client keeps failing, then frees it on unlock', async () => {
      const watchdogTimeoutMs = 600;
      const holder = pool.make(fleet.url(0), { watchdogTimeoutMs });
      const rival = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix, watchdogTimeoutMs });
      const lock = holder.getLock('long-job');
      const rivalLock = rival.getLock('long-job');
      let rivalAttempts = 0;
      await lock.withLock(async ({ signal }) => {
        const until = performance.now() + 5 * watchdogTimeoutMs;
        while (performance.now() < until) {
          expect(await rival.task(() => rivalLock.tryLock())).toBe(false);
          rivalAttempts++;
          await sleep(50);
        }
        expect(signal.aborted).toBe(false);
      });
      expect(rivalAttempts).toBeGreaterThan(20);
      expect(await rival.task(() => rivalLock.tryLock({ leaseMs: 1_000 }))).toBe(true);
      expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['long-job']);
    });

    it('never renews a hold with a fixed lease', async () => {
      const client = pool.make(fleet.url(0), { watchdogTimeoutMs: 600 });
      const renewed: number[] = [];
      client.on('lockRenewed', (event) => renewed.push(event.count));
      const handle = await client.getLock('fixed').acquire({ leaseMs: 400 });
      expect(await eventually(() => handle.signal.aborted, 2_000)).toBe(true);
      expect(renewed).toEqual([]);
      // The signal aborts at lease − drift; the server's TTL ends a few ms later.
      expect(await eventually(async () => !(await client.getLock('fixed').isLocked()), 1_000)).toBe(true);
    });

    it('renews 300 holds with far fewer script calls than one per hold per tick', async () => {
      const client = pool.make(fleet.url(0), { watchdogTimeoutMs: 600 });
      const renewedCounts: number[] = [];
      client.on('lockRenewed', (event) => renewedCounts.push(event.count));
      const handles = await Promise.all(Array.from({ length: 300 }, (_, i) => client.getLock(`many:${i}`).acquire()));
      const redis = fleet.client(0);
      const callsOf = async () => {
        const info = await redis.info('commandstats');
        return ['evalsha', 'eval'].reduce((sum, cmd) => sum + Number(new RegExp(`^cmdstat_${cmd}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0), 0);
      };
      const before = await callsOf();
      renewedCounts.length = 0;
      await sleep(2_000);
      const scriptCalls = (await callsOf()) - before;
      const holdRenewals = renewedCounts.reduce((a, b) => a + b, 0);
      // 2 s at one renewal every 200 ms is about 10 ticks: one call per hold per tick would be ~3,000.
      expect(holdRenewals).toBeGreaterThanOrEqual(300 * 5);
      expect(scriptCalls).toBeLessThan(holdRenewals / 20);
      expect(Math.max(...renewedCounts)).toBeLessThanOrEqual(100);
      expect(handles.every((handle) => !handle.signal.aborted)).toBe(true);
      await Promise.all(handles.map((handle) => handle.unlock()));
    });
  });

  describe('loss', () => {
    it("aborts the holder's signal within one renewal tick when the key is deleted from outside", async () => {
      const watchdogTimeoutMs = 900;
      const client = pool.make(fleet.url(0), { watchdogTimeoutMs });
      const lost: string[] = [];
      client.on('lockLost', (event) => lost.push(event.reason));
      const handle = await client.getLock('deleted').acquire();
      await fleet.client(0).del(`${client.options.keyPrefix}:{deleted}`);
      const deletedAt = performance.now();
      expect(await eventually(() => handle.signal.aborted, watchdogTimeoutMs)).toBe(true);
      expect(performance.now() - deletedAt).toBeLessThan(watchdogTimeoutMs / 3 + 250);
      expect(handle.signal.reason).toBeInstanceOf(LockLostError);
      expect((handle.signal.reason as LockLostError).reason).toBe('expired');
      expect(lost).toEqual(['expired']);
      await expect(handle.unlock()).rejects.toMatchObject({ name: 'LockLostError', reason: 'expired' });
    });

    it('reports taken when another owner holds the key at renewal', async () => {
      const client = pool.make(fleet.url(0), { watchdogTimeoutMs: 600 });
      const handle = await client.getLock('stolen').acquire();
      const key = `${client.options.keyPrefix}:{stolen}`;
      const held = parseHold(await fleet.client(0).hgetall(key));
      const ttlMs = await fleet.client(0).pttl(key);
      await fleet
        .client(0)
        .multi()
        .del(key)
        .hset(key, holdFields({ ...held!, owner: 'thief:1' }))
        .pexpire(key, ttlMs)
        .exec();
      expect(await eventually(() => handle.signal.aborted, 2_000)).toBe(true);
      expect((handle.signal.reason as LockLostError).reason).toBe('taken');
    });
  });

  describe('reentry racing the last release', () => {
    it('keeps renewing when a reentrant acquire of a sibling branch lands before what looked like the last unlock', async () => {
      const watchdogTimeoutMs = 600;
      const client = pool.make(fleet.url(0), { watchdogTimeoutMs });
      const rival = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix, watchdogTimeoutMs });
      const lock = client.getLock('reentry-race');
      await client.task(async () => {
        await lock.lock();
        const sibling = lock.lock(); // in flight while the unlock below sees count 1
        await lock.unlock();
        await sibling;
        expect(await lock.getHoldCount()).toBe(1);
        await sleep(3 * watchdogTimeoutMs);
        expect(await lock.remainTimeToLive()).toBeGreaterThan(0);
        expect(await rival.task(() => rival.getLock('reentry-race').tryLock())).toBe(false);
        await lock.unlock();
      });
      expect(await lock.isLocked()).toBe(false);
    });
  });

  describe('unlock racing renewal', () => {
    it('never leaves the key behind when unlock lands at any offset around the renewal tick', async () => {
      const watchdogTimeoutMs = 300; // a tick every 100 ms
      const client = pool.make(fleet.url(0), { watchdogTimeoutMs });
      const redis = fleet.client(0);
      for (let round = 0; round < 40; round++) {
        const name = `race:${round}`;
        const handle = await client.getLock(name).acquire();
        // Offsets sweep one whole period in steps of 5 ms, so some unlocks coincide with a renewal in flight.
        await sleep(90 + ((round * 5) % 110));
        await handle.unlock();
        await sleep(watchdogTimeoutMs / 3 + 30); // past the next tick: a zombie renewal would have run by now
        expect(await redis.exists(`${client.options.keyPrefix}:{${name}}`)).toBe(0);
      }
    });
  });

  describe('faults', () => {
    it('frees the lock within watchdogTimeoutMs after the holder process is SIGKILLed', async () => {
      const prefix = uniquePrefix();
      const watchdogTimeoutMs = 1_500;
      const holder = new HolderProcess({ REDIS_URL: fleet.url(0), PREFIX: prefix, WATCHDOG_MS: String(watchdogTimeoutMs) });
      try {
        await holder.waitForLine('acquired', 10_000);
        holder.signal('SIGKILL');
        const killedAt = performance.now();
        const rival = pool.make(fleet.url(0), { keyPrefix: prefix, watchdogTimeoutMs });
        const handle = await rival.getLock('job').acquire({ waitMs: watchdogTimeoutMs * 2 });
        expect(performance.now() - killedAt).toBeLessThanOrEqual(watchdogTimeoutMs + 100);
        await handle.unlock();
      } finally {
        await holder.stop();
      }
    });

    it('lets another process in when the holder is stopped past its lease, and the holder learns of the loss within a second of SIGCONT', async () => {
      const prefix = uniquePrefix();
      const watchdogTimeoutMs = 900;
      const holder = new HolderProcess({ REDIS_URL: fleet.url(0), PREFIX: prefix, WATCHDOG_MS: String(watchdogTimeoutMs) });
      try {
        const acquired = await holder.waitForLine('acquired', 10_000);
        holder.signal('SIGSTOP');
        const rival = pool.make(fleet.url(0), { keyPrefix: prefix, watchdogTimeoutMs });
        const handle = await rival.getLock('job').acquire({ waitMs: 5_000 });
        expect(BigInt(handle.token) > BigInt(acquired.split(' ')[1]!)).toBe(true);
        holder.signal('SIGCONT');
        const lost = await holder.waitForLine('lost', 2_000);
        const [, reason, sinceResume] = lost.split(' ');
        expect(['unreachable', 'taken', 'expired']).toContain(reason);
        expect(Number(sinceResume)).toBeLessThan(1_000);
        // The stale holder's loss must not have disturbed the new holder.
        expect(handle.signal.aborted).toBe(false);
        await handle.unlock();
      } finally {
        await holder.stop();
      }
    });

    it('loses the hold when Redis is paused (SIGSTOP) longer than the lease', async () => {
      const own = await RedisFleet.start({ size: 1 });
      const client = pool.make(own.url(0), { watchdogTimeoutMs: 900 });
      try {
        const startedAt = performance.now();
        const handle = await client.getLock('paused').acquire();
        let abortedAt = Number.POSITIVE_INFINITY;
        handle.signal.addEventListener('abort', () => (abortedAt = performance.now()));
        await own.pause(0);
        expect(await eventually(() => handle.signal.aborted, 3_000)).toBe(true);
        // Told at the hold's deadline: lease − drift after the acquire was sent, so
        // within 900 ms of startedAt, plus however late a timer fires on a loaded machine.
        expect(abortedAt - startedAt).toBeLessThan(900 + 100);
        expect((handle.signal.reason as LockLostError).reason).toBe('unreachable');
      } finally {
        await own.resume(0);
        await own.stop();
      }
    });

    it('keeps the hold when Redis is paused (SIGSTOP) for less than the lease', async () => {
      const own = await RedisFleet.start({ size: 1 });
      const client = pool.make(own.url(0), { watchdogTimeoutMs: 1_500 });
      try {
        const handle = await client.getLock('short-pause').acquire();
        await own.pause(0);
        await sleep(400);
        await own.resume(0);
        await sleep(1_500); // past the lease that was current when the pause began
        expect(handle.signal.aborted).toBe(false);
        expect(await client.getLock('short-pause').remainTimeToLive()).toBeGreaterThan(0);
        await handle.unlock();
      } finally {
        await own.stop();
      }
    });

    it('loses the hold under CLIENT PAUSE longer than the lease, and keeps it under a shorter one', async () => {
      const own = await RedisFleet.start({ size: 1 });
      const client = pool.make(own.url(0), { watchdogTimeoutMs: 1_200 });
      try {
        const kept = await client.getLock('cp-short').acquire();
        await own.clientPause(0, 300);
        await sleep(1_500);
        expect(kept.signal.aborted).toBe(false);
        await kept.unlock();

        const lost = await client.getLock('cp-long').acquire();
        await own.clientPause(0, 2_500);
        expect(await eventually(() => lost.signal.aborted, 3_000)).toBe(true);
        expect((lost.signal.reason as LockLostError).reason).toBe('unreachable');
      } finally {
        await own.stop();
      }
    });
  });
});
