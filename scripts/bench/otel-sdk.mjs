// @ts-check
/**
 * Registers the OpenTelemetry SDK before a bench runs, to measure rlock's
 * cost with metrics and traces on (issue 27: S1 within 10 % of no SDK): a
 * MeterProvider whose reader collects every second into memory (so the
 * collections' own cost is inside the measured window), and a
 * TracerProvider that keeps spans in memory (S1 makes none: its
 * acquisitions never wait).
 *
 *   node --import ./scripts/bench/otel-sdk.mjs scripts/bench/telemetry-overhead.mjs
 *
 * A script that imports this module again gets the same instance, and with
 * it `reader` and `spans` to check what was recorded.
 */
import { metrics, trace } from '@opentelemetry/api';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

export const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
export const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 1_000 });
export const spans = new InMemorySpanExporter();
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
// The reader's timer must not keep a finished bench alive.
process.once('beforeExit', () => void reader.shutdown());
