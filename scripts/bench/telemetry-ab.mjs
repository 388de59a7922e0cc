/**
 * S1's loop with the SDK registered, a baseline build beside this checkout's
 * in ONE process, in 400 ms slices interleaved round by round: on a loaded
 * machine that cancels the drift that moves separate processes' CPU per pair
 * by tens of percent. Conditions (this checkout unless named): baseline with
 * the SDK, with the SDK, no provider, the SDK's two records per pair alone
 * (made by the loop into a provider of its own: the floor), metrics only.
 * Ratios are per round, then their median (quartiles beside).
 *
 *   REDIS_URL=redis://127.0.0.1:6380 BENCH_RLOCK_BASELINE=/path/to/built/checkout ROUNDS=60 \
 *     taskset -c 1 node scripts/bench/telemetry-ab.mjs
 */
import { metrics, trace } from '@opentelemetry/api';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 1_000 });
const mp = new MeterProvider({ readers: [reader] });
const tp = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())] });
const sdk = (on) => {
  metrics.disable();
  trace.disable();
  if (on === true || on === 'meter') metrics.setGlobalMeterProvider(mp);
  if (on === true) trace.setGlobalTracerProvider(tp);
};
const fmeter = new MeterProvider({
  readers: [new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE), exportIntervalMillis: 1_000 })],
}).getMeter('floor');
const adv = { unit: 's', advice: { explicitBucketBoundaries: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300] } };
const fa = fmeter.createHistogram('rlock.acquire.duration', adv),
  fh = fmeter.createHistogram('rlock.hold.duration', adv);
const A = Object.freeze({ 'rlock.object': 'lock', 'rlock.outcome': 'acquired' }),
  B = Object.freeze({ 'rlock.object': 'lock', 'rlock.end': 'released' });
const builds = {
  main: await import(`file://${process.env.BENCH_RLOCK_BASELINE?.replace(/\/$/, '')}/packages/rlock/dist/esm/index.js`),
  mine: await import('@org/rlock'),
};
const url = process.env.REDIS_URL;
const clients = {};
for (const [k, b] of Object.entries(builds)) {
  const c = b.createClient({ redis: url, keyPrefix: `ab-${k}-${process.pid}` });
  c.on('error', () => undefined);
  clients[k] = { c, locks: Array.from({ length: 64 }, (_, i) => c.getLock(`s1:${i}`)) };
}
const lease = { leaseMs: 10000 };
async function slice(k, ms, floor) {
  const { c, locks } = clients[k];
  let pairs = 0;
  const end = performance.now() + ms;
  const cpu0 = process.cpuUsage();
  await Promise.all(
    locks.map((lock) =>
      c.task(async () => {
        while (performance.now() < end) {
          if (floor) {
            const t0 = performance.now();
            await lock.lock(lease);
            const t1 = performance.now();
            fa.record((t1 - t0) / 1000, A);
            await lock.unlock();
            fh.record((performance.now() - t1) / 1000, B);
          } else {
            await lock.lock(lease);
            await lock.unlock();
          }
          pairs++;
        }
      }),
    ),
  );
  const u = process.cpuUsage(cpu0);
  return (u.user + u.system) / pairs;
}
const conds = [
  ['main', true],
  ['mine', true],
  ['mine', false],
  ['mine', 'floor'],
  ['mine', 'meter'],
];
const nm = (s) => (s === true ? 'sdk' : s === false ? 'none' : s);
const res = Object.fromEntries(conds.map(([k, s]) => [`${k}-${nm(s)}`, []]));
for (const [k, s] of conds) {
  sdk(s === 'floor' ? false : s);
  await slice(k, 1500, s === 'floor');
} // warm-up
const ROUNDS = +(process.env.ROUNDS ?? 30);
for (let r = 0; r < ROUNDS; r++) {
  const order = conds.map((_, i) => conds[(i + r) % conds.length]);
  for (const [k, s] of order) {
    sdk(s === 'floor' ? false : s);
    res[`${k}-${nm(s)}`].push(await slice(k, 400, s === 'floor'));
  }
}
const med = (a) => {
  const b = [...a].sort((x, y) => x - y);
  return b[b.length >> 1];
};
const ratios = (a, b) => res[a].map((v, i) => v / res[b][i]);
for (const [k, v] of Object.entries(res)) console.log(k.padEnd(10), 'CPU µs/pair median', med(v).toFixed(1));
const q = (a) => {
  const b = [...a].sort((x, y) => x - y);
  return `${med(b).toFixed(3)} (q1 ${b[b.length >> 2].toFixed(3)}, q3 ${b[(3 * b.length) >> 2].toFixed(3)})`;
};
console.log('main sdk÷mine none', q(ratios('main-sdk', 'mine-none')));
console.log('mine floor÷none', q(ratios('mine-floor', 'mine-none')));
console.log('mine meter÷none', q(ratios('mine-meter', 'mine-none')));
console.log('mine sdk÷none', q(ratios('mine-sdk', 'mine-none')));
console.log('mine÷main sdk', q(ratios('mine-sdk', 'main-sdk')));
await Promise.all(Object.values(clients).map(({ c }) => c.close()));
await reader.shutdown();
process.exit(0);
