import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type Histogram,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createClient, type LeaseLostMessage, type RenewalMessage, type RLockClient, type RLockClientOptions } from '@org/rlock';
import { loadOtelApi } from '@org/rlock-core/internal';
import { RedisFleet, eventually, uniquePrefix } from '@org/rlock-testing';
import { Child, fixture } from './children.js';

type Attributes = Record<string, unknown>;
interface Point {
  readonly attributes: Attributes;
  /** A counter's value, or a histogram's count. */
  readonly value: number;
}

/**
 * Metrics, traces and diagnostics channels, read back through the
 * OpenTelemetry SDK's in-memory exporters against a real Redis. The meter
 * provider is registered globally once; each test reads what its own client
 * recorded (its names, its prefix) and only deltas where series are shared.
 */
describe('observability', () => {
  let fleet: RedisFleet;
  const clients: RLockClient[] = [];
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
    // rlock loads the optional api lazily: wait for it, so the first acquisition counts.
    expect(await loadOtelApi()).toBeDefined();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    spans.reset();
  });
  afterAll(async () => {
    metrics.disable();
    trace.disable();
    context.disable();
    await meterProvider.shutdown();
    await fleet.stop();
  });

  function client(options: Partial<RLockClientOptions> = {}): RLockClient {
    const keyPrefix = options.keyPrefix ?? uniquePrefix();
    const made = createClient({ redis: fleet.url(0), watchdogTimeoutMs: 300, ...options, keyPrefix });
    made.on('error', () => undefined);
    prefixes.set(made, keyPrefix);
    clients.push(made);
    return made;
  }

  /** Every point of instrument `name` now (cumulative). */
  async function points(name: string): Promise<Point[]> {
    exporter.reset();
    await reader.forceFlush();
    const found: Point[] = [];
    for (const resource of exporter.getMetrics()) {
      for (const scope of resource.scopeMetrics) {
        if (scope.scope.name !== '@org/rlock') continue;
        for (const metric of scope.metrics) {
          if (metric.descriptor.name !== name) continue;
          for (const point of metric.dataPoints as DataPoint<number | Histogram>[]) {
            const value = typeof point.value === 'number' ? point.value : point.value.count;
            found.push({ attributes: point.attributes, value });
          }
        }
      }
    }
    return found;
  }

  /** The value of the point of `name` whose attributes are exactly `attributes` (0 when absent). */
  async function valueOf(name: string, attributes: Attributes): Promise<number> {
    const match = (await points(name)).find((point) => sameAttributes(point.attributes, attributes));
    return match?.value ?? 0;
  }

  function sameAttributes(a: Attributes, b: Attributes): boolean {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
  }

  describe('without a MeterProvider', () => {
    it('records nothing, and holds taken then are not counted when they end later', async () => {
      const rlock = client();
      const lock = rlock.getLock('before-provider');
      const held = await lock.acquire();
      expect(await lock.tryLock({ waitMs: 0 }).catch(() => 'outside a task')).toBe('outside a task');
      await rlock.task(async () => expect(await lock.tryLock()).toBe(false));
      metrics.setGlobalMeterProvider(meterProvider);
      await held.unlock();
      // The provider saw none of it: no instrument was ever made or recorded into.
      for (const name of ['rlock.acquire.duration', 'rlock.hold.duration', 'rlock.holds.active', 'rlock.waiters.active']) {
        expect(await points(name)).toEqual([]);
      }
    });
  });

  describe('without @opentelemetry/api installed', () => {
    // A child process, since this one has loaded the api: there the name cannot be resolved at all (ESM and CJS).
    it('locks through both builds, observes no acquisition, and still publishes on the diagnostics channels', async () => {
      const child = new Child(fixture('without-otel-api.mjs'), { REDIS_URL: fleet.url(0), PREFIX: uniquePrefix() });
      const { code } = await child.exited;
      expect({ code, stderr: child.stderr }).toEqual({ code: 0, stderr: '' });
      const [result] = child.events;
      const token = expect.stringMatching(/^\d+$/) as unknown;
      expect(result).toEqual({
        esmHidden: true,
        cjsHidden: true,
        apiLoaded: false,
        esm: { tokens: [token, token], refused: false },
        cjs: { tokens: [token, token], refused: false },
        // Nothing listened: no acquisition was observed, so nothing was timed or recorded.
        probesWithoutSubscriber: 0,
        subscribed: { tokens: [token, token], refused: false },
        // The hold, the refused tryLock, the waiter.
        probesWithSubscriber: 3,
        seen: expect.arrayContaining(['acquire:start:lock', 'acquire:end:granted', 'acquire:end:none', 'release:start:lock']) as unknown,
      });
      expect((result?.seen as string[]).filter((event) => event === 'acquire:start:lock')).toHaveLength(3);
      expect((result?.seen as string[]).filter((event) => event === 'release:start:lock')).toHaveLength(2);
    });
  });

  describe('with a MeterProvider', () => {
    beforeAll(() => {
      metrics.setGlobalMeterProvider(meterProvider);
    });

    it('records an acquisition per call by object and outcome, and holds active and their duration', async () => {
      const keyPrefix = uniquePrefix();
      const rlock = client({ keyPrefix });
      const lock = rlock.getLock('metrics-lock');
      const acquired = { 'rlock.object': 'lock', 'rlock.outcome': 'acquired' };
      const notAcquired = { 'rlock.object': 'lock', 'rlock.outcome': 'not_acquired' };
      const timedOut = { 'rlock.object': 'lock', 'rlock.outcome': 'timeout' };
      const before = {
        acquired: await valueOf('rlock.acquire.duration', acquired),
        notAcquired: await valueOf('rlock.acquire.duration', notAcquired),
        timedOut: await valueOf('rlock.acquire.duration', timedOut),
        released: await valueOf('rlock.hold.duration', { 'rlock.object': 'lock', 'rlock.end': 'released' }),
      };
      const held = await lock.acquire();
      expect(await valueOf('rlock.holds.active', { 'rlock.object': 'lock' })).toBe(1);
      // A reentry counts as an acquisition, not as another hold.
      await held.run(() => lock.withLock(() => undefined));
      expect(await valueOf('rlock.holds.active', { 'rlock.object': 'lock' })).toBe(1);
      const other = client({ keyPrefix }).getLock('metrics-lock');
      await other.withLock(() => undefined, { waitMs: 50 }).catch(() => undefined);
      await held.unlock();
      expect(await valueOf('rlock.holds.active', { 'rlock.object': 'lock' })).toBe(0);
      // Another client's tryLock, refused while this one holds it.
      const again = await lock.acquire();
      const third = client({ keyPrefix });
      expect(await third.task(() => third.getLock('metrics-lock').tryLock())).toBe(false);
      await again.unlock();
      expect(await valueOf('rlock.acquire.duration', acquired)).toBe(before.acquired + 3);
      expect(await valueOf('rlock.acquire.duration', notAcquired)).toBe(before.notAcquired + 1);
      expect(await valueOf('rlock.acquire.duration', timedOut)).toBe(before.timedOut + 1);
      expect(await valueOf('rlock.hold.duration', { 'rlock.object': 'lock', 'rlock.end': 'released' })).toBe(before.released + 2);
    });

    it('counts the holds and waiters of every client of the process in one series each', async () => {
      const keyPrefix = uniquePrefix();
      const [first, second] = [client({ keyPrefix }), client({ keyPrefix })];
      const kind = { 'rlock.object': 'lock' };
      const held = [await first.getLock('sum-a').acquire(), await second.getLock('sum-b').acquire()];
      expect(await valueOf('rlock.holds.active', kind)).toBe(2);
      const waiting = [first.getLock('sum-b').acquire({ waitMs: 10_000 }), second.getLock('sum-a').acquire({ waitMs: 10_000 })];
      await eventually(async () => (await valueOf('rlock.waiters.active', kind)) === 2, 5_000);
      await Promise.all(held.map((hold) => hold.unlock()));
      const handed = await Promise.all(waiting);
      expect(await valueOf('rlock.waiters.active', kind)).toBe(0);
      expect(await valueOf('rlock.holds.active', kind)).toBe(2);
      await Promise.all(handed.map((hold) => hold.unlock()));
      expect(await valueOf('rlock.holds.active', kind)).toBe(0);
    });

    it('labels each object kind: fair lock, read and write lock, semaphore, permit semaphore, latch, non-reentrant lock, spin lock, non-reentrant fair lock', async () => {
      const rlock = client();
      const count = (object: string) => valueOf('rlock.acquire.duration', { 'rlock.object': object, 'rlock.outcome': 'acquired' });
      const kinds = [
        'fair_lock',
        'read_lock',
        'write_lock',
        'semaphore',
        'permit_semaphore',
        'latch',
        'non_reentrant_lock',
        'spin_lock',
        'non_reentrant_fair_lock',
      ];
      const before = new Map<string, number>();
      for (const kind of kinds) before.set(kind, await count(kind));

      await rlock.getFairLock('fair').withLock(() => undefined);
      const rw = rlock.getReadWriteLock('rw');
      await rw.readLock().withLock(() => undefined);
      await rw.writeLock().withLock(() => undefined);
      const semaphore = rlock.getSemaphore('sem');
      await semaphore.trySetPermits(1);
      await semaphore.acquire();
      await semaphore.release();
      const permits = rlock.getPermitExpirableSemaphore('pes');
      await permits.trySetPermits(1);
      const permit = await permits.acquire();
      expect(await valueOf('rlock.holds.active', { 'rlock.object': 'permit_semaphore' })).toBe(1);
      await permit.release();
      await rlock.getCountDownLatch('latch').await({ waitMs: 0 });
      await rlock.getNonReentrantLock('once').withLock(() => undefined);
      await rlock.getSpinLock('spin').withLock(() => undefined);
      await rlock.getNonReentrantFairLock('once-fair').withLock(() => undefined);

      for (const kind of kinds) expect([kind, await count(kind)]).toEqual([kind, (before.get(kind) ?? 0) + 1]);
      expect(await valueOf('rlock.holds.active', { 'rlock.object': 'permit_semaphore' })).toBe(0);
      expect(await valueOf('rlock.holds.active', { 'rlock.object': 'read_lock' })).toBe(0);
    });

    it('labels a multi-lock as multi_lock (its members as their kinds) and a leader election as leader', async () => {
      const rlock = client();
      const count = (object: string, outcome = 'acquired') => valueOf('rlock.acquire.duration', { 'rlock.object': object, 'rlock.outcome': outcome });
      const before = {
        multi: await count('multi_lock'),
        lock: await count('lock'),
        leader: await count('leader'),
        refused: await count('multi_lock', 'not_acquired'),
      };
      const multi = rlock.getMultiLock([rlock.getLock('m1'), rlock.getLock('m2')]);
      await multi.withLock(() => undefined);
      const other = client();
      const blocked = await other.getLock('b1').acquire();
      expect(await rlock.task(() => rlock.getMultiLock([rlock.getLock('b0'), client({ keyPrefix: prefixes.get(other) }).getLock('b1')]).tryLock())).toBe(false);
      await blocked.unlock();
      const term = await rlock.getLeaderElection('leader').elect();
      expect(await valueOf('rlock.holds.active', { 'rlock.object': 'leader' })).toBe(1);
      await term.resign();
      expect(await count('multi_lock')).toBe(before.multi + 1);
      expect(await count('multi_lock', 'not_acquired')).toBe(before.refused + 1);
      // m1, m2 and the other client's b1; b0 only when the multi-lock, going in key order, tried it before the refused b1.
      const b0First = lockKeyOf(rlock, 'b0') < lockKeyOf(other, 'b1');
      expect(await count('lock')).toBe(before.lock + (b0First ? 4 : 3));
      expect(await count('leader')).toBe(before.leader + 1);
    });

    it('counts a waiter while it waits, and an aborted call as aborted', async () => {
      const keyPrefix = uniquePrefix();
      const lock = client({ keyPrefix }).getLock('waiters');
      const held = await lock.acquire();
      const waiting = { 'rlock.object': 'lock' };
      const aborted = { 'rlock.object': 'lock', 'rlock.outcome': 'aborted' };
      const abortedBefore = await valueOf('rlock.acquire.duration', aborted);
      const controller = new AbortController();
      const call = client({ keyPrefix }).getLock('waiters').acquire({ signal: controller.signal });
      await eventually(async () => (await valueOf('rlock.waiters.active', waiting)) === 1, 5_000);
      controller.abort(new Error('gave up'));
      await expect(call).rejects.toThrow('gave up');
      expect(await valueOf('rlock.waiters.active', waiting)).toBe(0);
      expect(await valueOf('rlock.acquire.duration', aborted)).toBe(abortedBefore + 1);
      await held.unlock();
    });

    it('counts a lost lease with its reason, ends the hold as lost, and times renewal batches', async () => {
      const rlock = client();
      const lock = rlock.getLock('lost');
      const lost = { 'rlock.object': 'lock', 'rlock.reason': 'expired' };
      const before = await valueOf('rlock.lease.lost', lost);
      const endedLost = await valueOf('rlock.hold.duration', { 'rlock.object': 'lock', 'rlock.end': 'lost' });
      const held = await lock.acquire();
      // Renewed every 100 ms: at least one batch is timed before the key goes.
      await eventually(async () => (await valueOf('rlock.renewal.duration', { 'rlock.outcome': 'ok' })) > 0, 5_000);
      await fleet.client(0).del(lockKeyOf(rlock, 'lost'));
      await eventually(() => held.signal.aborted, 5_000);
      expect(await valueOf('rlock.lease.lost', lost)).toBe(before + 1);
      expect(await valueOf('rlock.hold.duration', { 'rlock.object': 'lock', 'rlock.end': 'lost' })).toBe(endedLost + 1);
      expect(await valueOf('rlock.holds.active', { 'rlock.object': 'lock' })).toBe(0);
      await expect(held.unlock()).rejects.toThrow();
    });

    it('adds rlock.name only with metricName, as it maps the name', async () => {
      const named = client({ metricName: (name) => (name.startsWith('order:') ? 'order' : undefined) });
      await named.getLock('order:42').withLock(() => undefined);
      await named.getLock('misc:1').withLock(() => undefined);
      await client()
        .getLock('order:43')
        .withLock(() => undefined);
      const names = (await points('rlock.acquire.duration')).map((point) => point.attributes['rlock.name']);
      expect(names).toContain('order');
      expect(names.filter((name) => name !== undefined && name !== 'order')).toEqual([]);
    });

    it('keeps counting holds of a name whose idle series was dropped past 1,000 attribute sets', async () => {
      // Each name its own series, as with a metricName that returns raw names: the process passes 1,000 sets.
      const raw = client({ metricName: (name) => name });
      const names = Array.from({ length: 1_001 }, (_, i) => `raw-${i}`);
      for (const name of names) await raw.getLock(name).withLock(() => undefined);
      const last = { 'rlock.object': 'lock', 'rlock.name': 'raw-1000' };
      // This collection reports the idle sets at 0, then drops them.
      expect(await valueOf('rlock.holds.active', last)).toBe(0);
      const held = await raw.getLock('raw-1000').acquire();
      expect(await valueOf('rlock.holds.active', last)).toBe(1);
      await held.unlock();
      expect(await valueOf('rlock.holds.active', last)).toBe(0);
    });
  });

  describe('traces', () => {
    beforeAll(() => {
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      trace.setGlobalTracerProvider(tracerProvider);
    });

    it('spans only acquisitions that waited or failed, under the caller’s span', async () => {
      const keyPrefix = uniquePrefix();
      const rlock = client({ keyPrefix });
      const tracer = trace.getTracer('test');
      await tracer.startActiveSpan('request', async (request) => {
        await rlock.getLock('span').withLock(() => undefined); // immediate: no span
        const held = await client({ keyPrefix }).getLock('span').acquire();
        const waited = rlock.getLock('span').withLock(() => undefined);
        await eventually(async () => (await valueOf('rlock.waiters.active', { 'rlock.object': 'lock' })) === 1, 5_000);
        await held.unlock();
        await waited;
        request.end();
      });
      const acquires = spans.getFinishedSpans().filter((span) => span.name === 'rlock.acquire');
      expect(acquires.map((span) => span.attributes)).toEqual([{ 'rlock.object': 'lock', 'rlock.name': 'span', 'rlock.outcome': 'acquired' }]);
      const request = spans.getFinishedSpans().find((span) => span.name === 'request');
      expect(acquires[0]?.parentSpanContext?.spanId).toBe(request?.spanContext().spanId);
    });

    it('records a refused call as a span with its outcome', async () => {
      const keyPrefix = uniquePrefix();
      const rlock = client({ keyPrefix });
      const held = await client({ keyPrefix }).getLock('refused').acquire();
      expect(await rlock.task(() => rlock.getLock('refused').tryLock())).toBe(false);
      await held.unlock();
      expect(spans.getFinishedSpans().map((span) => span.attributes['rlock.outcome'])).toEqual(['not_acquired']);
    });

    it('adds rlock.lease.lost to the span active where the hold was taken', async () => {
      const rlock = client();
      const tracer = trace.getTracer('test');
      const held = await tracer.startActiveSpan('job', async (job) => {
        const handle = await rlock.getLock('job').acquire();
        await fleet.client(0).del(lockKeyOf(rlock, 'job'));
        await eventually(() => handle.signal.aborted, 5_000);
        job.end();
        return handle;
      });
      const job = spans.getFinishedSpans().find((span) => span.name === 'job');
      expect(job?.events.map((event) => [event.name, event.attributes?.['rlock.reason']])).toEqual([['rlock.lease.lost', 'expired']]);
      await expect(held.unlock()).rejects.toThrow();
    });
  });

  describe('diagnostics channels', () => {
    it('trace acquire and release with { object, name, owner }, and publish lease losses and renewals', async () => {
      const seen: string[] = [];
      const contexts: unknown[] = [];
      const lost: LeaseLostMessage[] = [];
      const renewals: RenewalMessage[] = [];
      const onStart = (message: unknown) => {
        contexts.push({ ...(message as object) });
        seen.push('start');
      };
      const onEnd = () => seen.push('asyncEnd');
      const onLost = (message: unknown) => lost.push(message as LeaseLostMessage);
      const onRenewal = (message: unknown) => renewals.push(message as RenewalMessage);
      subscribe('tracing:rlock:acquire:start', onStart);
      subscribe('tracing:rlock:acquire:asyncEnd', onEnd);
      subscribe('tracing:rlock:release:start', onStart);
      subscribe('rlock:lease-lost', onLost);
      subscribe('rlock:renewal', onRenewal);
      try {
        const rlock = client();
        const held = await rlock.getLock('channels').acquire();
        await eventually(() => renewals.length > 0, 5_000);
        await held.unlock();
        const semaphore = rlock.getSemaphore('channels-sem');
        await semaphore.trySetPermits(1);
        await semaphore.acquire();
        const doomed = await rlock.getLock('doomed').acquire();
        await fleet.client(0).del(lockKeyOf(rlock, 'doomed'));
        await eventually(() => lost.length > 0, 5_000);
        await expect(doomed.unlock()).rejects.toThrow();

        expect(contexts.slice(0, 2)).toEqual([
          { object: 'lock', name: 'channels', owner: expect.stringMatching(new RegExp(`^${rlock.clientId}:`)) as unknown },
          { object: 'lock', name: 'channels', owner: expect.stringMatching(new RegExp(`^${rlock.clientId}:`)) as unknown },
        ]);
        expect(contexts[2]).toMatchObject({ object: 'semaphore', name: 'channels-sem' });
        expect(seen.filter((event) => event === 'asyncEnd').length).toBe(3);
        expect(lost).toEqual([expect.objectContaining({ object: 'lock', name: 'doomed', reason: 'expired' })]);
        expect(renewals[0]).toMatchObject({ count: 1, outcome: 'ok' });
        expect(typeof renewals[0]?.durationMs).toBe('number');
      } finally {
        unsubscribe('tracing:rlock:acquire:start', onStart);
        unsubscribe('tracing:rlock:acquire:asyncEnd', onEnd);
        unsubscribe('tracing:rlock:release:start', onStart);
        unsubscribe('rlock:lease-lost', onLost);
        unsubscribe('rlock:renewal', onRenewal);
      }
    });
  });
});

const prefixes = new WeakMap<RLockClient, string>();

/** The Redis key of lock `name` on `client` (the public layout: `<prefix>:{<name>}`). */
function lockKeyOf(client: RLockClient, name: string): string {
  return `${prefixes.get(client) ?? ''}:{${name}}`;
}
