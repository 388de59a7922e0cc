// The optional `@opentelemetry/api` peer, imported once and lazily; without it rlock runs and records nothing.
// Only the calls rlock makes are typed here, structurally, so no type of the optional package reaches rlock's declarations.

/** Attributes of one measurement or span. */
export type OtelAttributes = Record<string, string>;

export interface OtelHistogram {
  record(value: number, attributes?: OtelAttributes): void;
}

/** A counter or an up-down counter. */
export interface OtelCounter {
  add(value: number, attributes?: OtelAttributes): void;
}

export interface OtelInstrumentOptions {
  readonly description?: string;
  readonly unit?: string;
  readonly advice?: { readonly explicitBucketBoundaries?: number[] };
}

/** What an observable instrument's callback reports into at collection time. */
export interface OtelObservableResult {
  observe(value: number, attributes?: OtelAttributes): void;
}

export interface OtelMeter {
  createHistogram(name: string, options?: OtelInstrumentOptions): OtelHistogram;
  createCounter(name: string, options?: OtelInstrumentOptions): OtelCounter;
  createObservableUpDownCounter(name: string, options?: OtelInstrumentOptions): { addCallback(callback: (result: OtelObservableResult) => void): void };
}

export interface OtelSpan {
  addEvent(name: string, attributes?: OtelAttributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  isRecording(): boolean;
  end(endTime?: number): void;
}

export interface OtelTracer {
  startSpan(name: string, options?: { startTime?: number; attributes?: OtelAttributes }): OtelSpan;
}

export interface OtelTracerProvider {
  getTracer(name: string, version?: string): OtelTracer;
}

/** The part of `@opentelemetry/api` rlock calls. */
export interface OtelApi {
  readonly metrics: { getMeterProvider(): { getMeter(name: string, version?: string): OtelMeter } };
  readonly trace: { getTracerProvider(): OtelTracerProvider; getActiveSpan(): OtelSpan | undefined };
  readonly ProxyTracerProvider: new () => OtelTracerProvider & { getDelegate(): OtelTracerProvider };
  createNoopMeter(): OtelMeter;
  readonly SpanStatusCode: { readonly ERROR: number };
}

// Process-wide, as OpenTelemetry's global providers are: a later client records from its first call.
let api: OtelApi | undefined;
let loading: Promise<OtelApi | undefined> | undefined;
/** The load has settled (the api, or its absence, is known). */
let settled = false;

/** Loads `@opentelemetry/api` once per process: the api, or undefined when it is absent or older than 1.3 (nothing recorded until then). */
export function loadOtelApi(): Promise<OtelApi | undefined> {
  loading ??= import('@opentelemetry/api').then(
    (loaded) => {
      const candidate = ('metrics' in loaded ? loaded : (loaded as { default: unknown }).default) as Partial<OtelApi> | undefined;
      if (typeof candidate?.metrics?.getMeterProvider === 'function' && typeof candidate.createNoopMeter === 'function') api = candidate as OtelApi;
      settled = true;
      return api;
    },
    () => {
      settled = true;
      return undefined;
    },
  );
  return loading;
}

/** The load under way, until it settles (an ESM import is asynchronous: calls made meanwhile are recorded when it has). */
export function otelApiLoading(): Promise<OtelApi | undefined> | undefined {
  return settled ? undefined : loading;
}

/** The loaded api, or undefined (not installed, or not loaded yet). */
export function otelApi(): OtelApi | undefined {
  return api;
}
