// @ts-check
/**
 * Registers the OpenTelemetry SDK before a bench runs, to measure rlock's
 * cost with metrics and traces on (issue 27: S1 within 10 % of no SDK):
 * a MeterProvider with a reader that collects every 10 s, and a
 * TracerProvider that keeps spans in memory (S1 makes none: its
 * acquisitions never wait).
 *
 *   node --import ./scripts/bench/otel-sdk.mjs scripts/bench/run.mjs s1
 */
import { metrics, trace } from '@opentelemetry/api';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 10_000 });
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())] }));
// The reader's timer must not keep a finished bench alive.
process.once('beforeExit', () => void reader.shutdown());
