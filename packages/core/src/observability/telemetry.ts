// Metrics and traces through the optional `@opentelemetry/api`, recorded only while something listens.
// Names and attributes: docs/observability.md ("Metrics" and "Traces"), which users build dashboards on.
import { LockAcquireTimeoutError } from '../errors.js';
import { activeCount, observeActive, type ActiveCount } from './active.js';
import { acquireChannel, leaseLostChannel, renewalChannel, type LockChannelContext } from './channels.js';
import {
  loadOtelApi,
  otelApi,
  otelApiLoading,
  type OtelAttributes,
  type OtelCounter,
  type OtelHistogram,
  type OtelMeter,
  type OtelSpan,
  type OtelTracer,
  type OtelTracerProvider,
} from './otel-api.js';

/** The meter's and tracer's name and version (the version of `@org/rlock`; a unit test keeps them equal). */
export const INSTRUMENTATION_NAME = '@org/rlock';
export const INSTRUMENTATION_VERSION = '0.1.0';

/** How an acquisition call ended (`rlock.outcome`). */
export type AcquireOutcome = 'acquired' | 'not_acquired' | 'timeout' | 'aborted' | 'error';

/** What a call that got no grant ended as: `not_acquired` (a try) or `timeout` (a wait). */
export type Refusal = Extract<AcquireOutcome, 'not_acquired' | 'timeout'>;

/** Loss reasons that are a lease lost (`rlock.lease.lost`); `closed` and `forced` were ended on purpose. */
const LEASE_LOSS_REASONS: ReadonlySet<string> = new Set(['expired', 'taken', 'unreachable', 'maxLease']);

/** Histogram buckets in seconds: from a round trip (1 ms) to a long wait or hold (5 min). */
const SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

interface Instruments {
  readonly acquireDuration: OtelHistogram;
  readonly holdDuration: OtelHistogram;
  readonly leaseLost: OtelCounter;
  readonly renewalDuration: OtelHistogram;
}

/** The synchronous instruments on `meter`; the active holds and waiters are observed (see active.ts). */
function makeInstruments(meter: OtelMeter): Instruments {
  observeActive(meter);
  const seconds = { unit: 's', advice: { explicitBucketBoundaries: SECONDS_BUCKETS } };
  return {
    acquireDuration: meter.createHistogram('rlock.acquire.duration', { ...seconds, description: 'Time from an acquisition call to its outcome.' }),
    holdDuration: meter.createHistogram('rlock.hold.duration', { ...seconds, description: 'Time a hold was held, until released or lost.' }),
    leaseLost: meter.createCounter('rlock.lease.lost', { unit: '{hold}', description: 'Holds whose lease was lost.' }),
    renewalDuration: meter.createHistogram('rlock.renewal.duration', { ...seconds, description: 'Time of one lease renewal batch call.' }),
  };
}

/** Wall-clock ms (what a span's start and end take) of a `performance.now()` reading. */
const wallMs = (monotonicMs: number): number => performance.timeOrigin + monotonicMs;

/** A waiter's report to its acquisition (see the wait queue's join and leave). */
export interface WaitWatch {
  /** The call joined a wait queue: it waits. */
  joined(): void;
  /** It left the queue (granted or not). */
  left(): void;
}

/** An acquisition's outcome, told in the reaction that settles the call: observing adds no promise to a pair. */
export interface AcquireWatch extends WaitWatch {
  /** Granted `grant` (undefined: not acquired); `hold`: the hold it granted, if it is one still held. */
  settled(grant: unknown, hold: object | undefined): void;
  /** Failed with `error`; `aborted`: the caller's signal ended it (`aborted`, not `error`). */
  failed(error: unknown, aborted: boolean): void;
}

/** The attribute sets of one object kind and `rlock.name`, each made once: the same objects spare an allocation per measurement. */
interface LabelSet {
  readonly id: string;
  readonly base: OtelAttributes;
  /** Its active holds and waiters (replaced when the registry dropped it while idle). */
  active: ActiveCount;
  /** `base` plus `rlock.outcome`, `rlock.end` or `rlock.reason`, by value. */
  readonly outcome: Record<string, OtelAttributes | undefined>;
  readonly end: Record<string, OtelAttributes | undefined>;
  readonly reason: Record<string, OtelAttributes | undefined>;
}

/** `labels`' base attributes plus `rlock.<key>` = `value`, made on first use. */
function variant(labels: LabelSet, key: 'outcome' | 'end' | 'reason', value: string): OtelAttributes {
  return (labels[key][value] ??= Object.freeze({ ...labels.base, [`rlock.${key}`]: value }));
}

/** The active count `labels` adds to now. */
function activeOf(labels: LabelSet): ActiveCount {
  if (labels.active.retired) labels.active = activeCount(labels.id, labels.base);
  return labels.active;
}

/** Label sets kept per client at most: past it (a metricName that returns raw names) they are made afresh. */
const MAX_LABEL_SETS = 1_000;

/** The client option that maps a lock's name to the `rlock.name` attribute (undefined: none). */
export type MetricNameMapper = (name: string) => string | undefined;

/** One observed acquisition call (made only when something listens), then its granted hold's record: one allocation per observed pair. */
export class AcquireProbe implements AcquireWatch {
  private readonly startedAt = performance.now();
  private waited = false;
  /** The count this call was added to while it waits. */
  private waiting: ActiveCount | undefined = undefined;
  /** As the hold's record: the count the hold was added to, when it was granted, and the span active in the holder's context then. */
  active: ActiveCount | undefined = undefined;
  heldAt = 0;
  span: OtelSpan | undefined = undefined;
  /** Counted off already: a lost hold's end is reported just before its loss. */
  ended = false;

  constructor(
    private readonly telemetry: Telemetry,
    readonly object: string,
    readonly name: string,
    readonly labels: LabelSet,
    private instruments: Instruments | undefined,
    private readonly tracer: OtelTracer | undefined,
    /** What "no grant" means for this call. */
    private readonly refusal: Refusal,
    /** The api was still loading when the call began: what it records waits for the load, then goes to the provider registered by then. */
    private loading: Promise<unknown> | undefined = undefined,
  ) {}

  /** Records into the instruments now, or, made while the api was loading, once it has (a measurement taken now keeps its value). */
  measure(record: (instruments: Instruments) => void): void {
    if (this.instruments !== undefined) record(this.instruments);
    else this.afterLoad((instruments) => instruments && record(instruments));
  }

  /** Made while the api was loading: calls `withoutProvider` once it has loaded, if no MeterProvider was registered by then. */
  whenLoaded(withoutProvider: () => void): void {
    this.afterLoad((instruments) => instruments ?? withoutProvider());
  }

  /** Made while the api was loading: `then` once it has, with the instruments of the MeterProvider registered by then (if any). */
  private afterLoad(then: (instruments: Instruments | undefined) => unknown): void {
    void this.loading?.then(() => {
      this.loading = undefined;
      this.instruments ??= this.telemetry.currentInstruments();
      then(this.instruments);
    });
  }

  joined(): void {
    this.waited = true;
    if (this.waiting !== undefined) return;
    this.waiting = activeOf(this.labels);
    this.waiting.waiters++;
  }

  left(): void {
    if (this.waiting === undefined) return;
    this.waiting.waiters--;
    this.waiting = undefined;
  }

  settled(grant: unknown, hold: object | undefined): void {
    this.end(grant === undefined ? this.refusal : 'acquired', hold);
  }

  failed(error: unknown, aborted: boolean): void {
    this.end(aborted ? 'aborted' : error instanceof LockAcquireTimeoutError ? 'timeout' : 'error', undefined, error);
  }

  /** The call ended with `outcome`; `hold` is the hold it granted, if it is one still held (a hold is tracked from its first grant). */
  end(outcome: AcquireOutcome, hold: object | undefined, error?: unknown): void {
    this.left();
    const now = performance.now();
    const durationS = (now - this.startedAt) / 1000;
    this.measure((instruments) => instruments.acquireDuration.record(durationS, variant(this.labels, 'outcome', outcome)));
    // An immediate success has no span: that keeps the uncontended path cheap.
    if (this.tracer !== undefined && (this.waited || outcome !== 'acquired')) {
      const span = this.tracer.startSpan('rlock.acquire', {
        startTime: wallMs(this.startedAt),
        attributes: { 'rlock.object': this.object, 'rlock.name': this.name, 'rlock.outcome': outcome },
      });
      if (outcome === 'error') span.setStatus({ code: otelApi()?.SpanStatusCode.ERROR ?? 2, message: error instanceof Error ? error.message : String(error) });
      span.end(wallMs(now));
    }
    if (hold !== undefined && outcome === 'acquired') this.telemetry.track(hold, this, this.tracer !== undefined, now);
  }
}

/** A client's `metricName` and tracked holds; the global meter and tracer are looked up per acquisition, so a later provider counts too. */
export class Telemetry {
  // Each hold to the probe that granted it. A Map, not a WeakMap: every tracked hold ends and leaves it, and a Map costs the GC less.
  private readonly holds = new Map<object, AcquireProbe>();
  private readonly labelSets = new Map<string, LabelSet>();
  // The global providers, as last looked up, and what was made of them: instruments and a tracer once per provider.
  private meterProvider: unknown;
  private instruments: Instruments | undefined;
  private tracerProvider: unknown;
  private tracer: OtelTracer | undefined;
  private noopTracerProvider: unknown;

  constructor(private readonly metricName: MetricNameMapper | undefined) {
    void loadOtelApi();
  }

  /** The instruments of the global MeterProvider, or undefined when none is registered (or the api is absent). */
  currentInstruments(): Instruments | undefined {
    const api = otelApi();
    if (api === undefined) return undefined;
    const provider = api.metrics.getMeterProvider();
    if (provider !== this.meterProvider) {
      this.meterProvider = provider;
      const meter = provider.getMeter(INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION);
      // The api's no-op provider hands out the one no-op meter: nothing to record into.
      this.instruments = meter === api.createNoopMeter() ? undefined : makeInstruments(meter);
    }
    return this.instruments;
  }

  /** The tracer of the global TracerProvider, or undefined when none is registered. */
  private currentTracer(): OtelTracer | undefined {
    const api = otelApi();
    if (api === undefined) return undefined;
    let provider: unknown = api.trace.getTracerProvider();
    // The global provider is a proxy; a fresh proxy's delegate is the api's no-op provider.
    this.noopTracerProvider ??= new api.ProxyTracerProvider().getDelegate();
    if (provider instanceof api.ProxyTracerProvider) provider = provider.getDelegate();
    if (provider !== this.tracerProvider) {
      this.tracerProvider = provider;
      this.tracer =
        provider === this.noopTracerProvider ? undefined : (provider as OtelTracerProvider).getTracer(INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION);
    }
    return this.tracer;
  }

  /** A probe for one acquisition call, or undefined when nothing listens (the common, cheap case). */
  startAcquire(object: string, name: string, refusal: Refusal): AcquireProbe | undefined {
    const metrics = this.currentInstruments();
    const traces = this.currentTracer();
    // Only in a process's first moments (an ESM import is asynchronous): a provider registered before the client counts from its first call.
    const loading = metrics === undefined ? otelApiLoading() : undefined;
    if (metrics === undefined && traces === undefined && loading === undefined && !acquireChannel.hasSubscribers && !leaseLostChannel.hasSubscribers) {
      return undefined;
    }
    return new AcquireProbe(this, object, name, this.labelsOf(object, name), metrics, traces, refusal, loading);
  }

  /** A hold granted for the first time (at `now`, still held) by `probe`'s call: counted as active until {@link holdEnded}. */
  track(hold: object, probe: AcquireProbe, tracing: boolean, now: number): void {
    if (this.holds.has(hold)) return;
    const span = tracing ? otelApi()?.trace.getActiveSpan() : undefined;
    const active = activeOf(probe.labels);
    active.holds++;
    probe.active = active;
    probe.heldAt = now;
    probe.span = span?.isRecording() ? span : undefined;
    this.holds.set(hold, probe);
    // Taken while the api was loading: kept only if a provider was there once it had, as a hold taken before any provider is not.
    probe.whenLoaded(() => {
      if (this.holds.get(hold) !== probe || probe.ended) return;
      probe.ended = true;
      this.holds.delete(hold);
      active.holds--;
    });
  }

  /** A tracked hold ended (`released` or `lost`). */
  holdEnded(hold: object, end: string): void {
    const record = this.holds.get(hold);
    if (record === undefined || record.ended) return;
    record.ended = true;
    // A lost hold's record stays for leaseLost, which is told next.
    if (end === 'released') this.holds.delete(hold);
    if (record.active !== undefined) record.active.holds--;
    const heldS = (performance.now() - record.heldAt) / 1000;
    const attributes = variant(record.labels, 'end', end === 'released' ? 'released' : 'lost');
    record.measure((instruments) => instruments.holdDuration.record(heldS, attributes));
  }

  /** A hold was lost (after its end was reported). */
  leaseLost(hold: object, name: string, owner: string, token: string | undefined, reason: string, error: Error): void {
    const record = this.holds.get(hold);
    this.holds.delete(hold);
    if (leaseLostChannel.hasSubscribers) leaseLostChannel.publish({ object: record?.object, name, owner, token, reason, error });
    if (record === undefined || !LEASE_LOSS_REASONS.has(reason)) return;
    const attributes = variant(record.labels, 'reason', reason);
    record.measure((instruments) => instruments.leaseLost.add(1, attributes));
    record.span?.addEvent('rlock.lease.lost', { 'rlock.object': record.object, 'rlock.name': name, 'rlock.reason': reason });
  }

  /** One renewal batch call: returns its end, or undefined when nothing listens. */
  startRenewal(count: number): ((outcome: 'ok' | 'error', error?: unknown) => void) | undefined {
    const metrics = this.currentInstruments();
    if (metrics === undefined && !renewalChannel.hasSubscribers) return undefined;
    const startedAt = performance.now();
    return (outcome, error) => {
      const durationMs = performance.now() - startedAt;
      metrics?.renewalDuration.record(durationMs / 1000, { 'rlock.outcome': outcome });
      if (renewalChannel.hasSubscribers) renewalChannel.publish({ count, outcome, durationMs, ...(error === undefined ? {} : { error }) });
    };
  }

  private labelsOf(object: string, name: string): LabelSet {
    let label: unknown;
    try {
      label = this.metricName?.(name);
    } catch {
      // A mapper that throws leaves the name out rather than fail the acquisition.
    }
    const named = typeof label === 'string' ? label : undefined;
    const id = named === undefined ? object : `${object}\u0000${named}`;
    const known = this.labelSets.get(id);
    if (known !== undefined) return known;
    if (this.labelSets.size >= MAX_LABEL_SETS) this.labelSets.clear();
    const base = Object.freeze<OtelAttributes>(named === undefined ? { 'rlock.object': object } : { 'rlock.object': object, 'rlock.name': named });
    const labels: LabelSet = { id, base, active: activeCount(id, base), outcome: {}, end: {}, reason: {} };
    this.labelSets.set(id, labels);
    return labels;
  }
}

/**
 * An acquisition call made of observed others (a multi-lock's): its duration and outcome, the `rlock:acquire` channel and a span
 * when it did not succeed. No client stands behind it, so no `metricName` applies.
 */
export function observeCall<T>(
  telemetry: Telemetry,
  object: string,
  name: string,
  refusal: Refusal,
  signal: AbortSignal | undefined,
  run: () => Promise<T>,
  granted: (value: T) => boolean,
): Promise<T> {
  const probe = telemetry.startAcquire(object, name, refusal);
  const observed =
    probe === undefined
      ? run
      : async (): Promise<T> => {
          let value: T;
          try {
            value = await run();
          } catch (error) {
            probe.failed(error, signal?.aborted === true);
            throw error;
          }
          probe.end(granted(value) ? 'acquired' : refusal, undefined);
          return value;
        };
  return acquireChannel.hasSubscribers ? acquireChannel.tracePromise(observed, { object, name, owner: undefined } satisfies LockChannelContext) : observed();
}
