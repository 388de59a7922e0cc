// @ts-check
/**
 * Observability: rlock's metrics in Prometheus through the OpenTelemetry SDK.
 * The application registers a MeterProvider with the Prometheus exporter
 * (rlock itself only calls @opentelemetry/api); workers contend for a lock,
 * a semaphore and a read-write lock, one hold loses its lease; then the
 * example scrapes /metrics as Prometheus would and checks every rlock series.
 *
 *   npm run build && node examples/observability/main.mjs
 *
 * Exit code 0 iff the scrape shows every instrument with the expected
 * attributes (and the workload itself held).
 */
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { metrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { createClient } from '@org/rlock';
import { RedisFleet } from '@org/rlock-testing';

// 1. The application's OpenTelemetry setup, before any client is made.
const exporter = new PrometheusExporter({ preventServerStart: true });
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [exporter] }));
const server = createServer((request, response) => exporter.getMetricsRequestHandler(request, response));
await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
const address = server.address();
const metricsUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/metrics`;

const WORKERS = 6;
const ROUNDS = 5;
const fleet = await RedisFleet.start({ size: 1 });
const keyPrefix = `observability-${randomBytes(6).toString('hex')}`;
// A short watchdog lease (renewed every 100 ms), so renewals show up quickly.
// metricName maps names to a few labels: 'order:17' -> 'order'.
const client = createClient({ redis: fleet.url(0), keyPrefix, watchdogTimeoutMs: 300, metricName: (name) => name.split(':')[0] });
client.on('error', () => undefined);
const failures = [];
try {
  // 2. A contended workload: WORKERS tasks take the same order lock in turn.
  const order = client.getLock('order:17');
  let inside = 0;
  await Promise.all(
    Array.from({ length: WORKERS }, () =>
      client.task(async () => {
        for (let round = 0; round < ROUNDS; round++) {
          await order.withLock(async () => {
            if (++inside > 1) failures.push('two workers inside the lock');
            await new Promise((resolve) => setTimeout(resolve, 5));
            inside--;
          });
        }
      }),
    ),
  );
  // A semaphore of 2 permits for 4 callers; a read-write lock; a refused tryLock.
  const quota = client.getSemaphore('quota:api');
  await quota.trySetPermits(2);
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      await quota.acquire({ waitMs: 5_000 });
      await new Promise((resolve) => setTimeout(resolve, 10));
      await quota.release();
    }),
  );
  const doc = client.getReadWriteLock('doc:9');
  await Promise.all([doc.readLock().withLock(() => undefined), doc.writeLock().withLock(() => undefined)]);
  const held = await order.acquire();
  if (await client.task(() => order.tryLock())) failures.push('tryLock got a held lock');
  // 3. A lost lease: the key vanishes from under its holder (an operator, a flush).
  await new Promise((resolve) => setTimeout(resolve, 150)); // a renewal or two first
  await fleet.client(0).del(`${keyPrefix}:{order:17}`);
  await new Promise((resolve, reject) => {
    held.signal.addEventListener('abort', resolve, { once: true });
    setTimeout(() => reject(new Error('the lost lease was not noticed within 2 s')), 2_000).unref();
  });
  await held.unlock().catch(() => undefined);

  // 4. Scrape as Prometheus would, and check every series. (Whether an
  // exporter appends the unit, `_seconds`, differs between its versions.)
  const scrape = await (await fetch(metricsUrl)).text();
  const expected = [
    /^rlock_acquire_duration(?:_seconds)?_bucket\{[^}]*rlock_object="lock"[^}]*rlock_outcome="acquired"/m,
    /^rlock_acquire_duration(?:_seconds)?_count\{[^}]*rlock_outcome="not_acquired"/m,
    /^rlock_acquire_duration(?:_seconds)?_count\{[^}]*rlock_object="semaphore"/m,
    /^rlock_acquire_duration(?:_seconds)?_count\{[^}]*rlock_object="write_lock"/m,
    /^rlock_acquire_duration(?:_seconds)?_count\{[^}]*rlock_name="order"/m,
    /^rlock_hold_duration(?:_seconds)?_count\{[^}]*rlock_end="released"/m,
    /^rlock_hold_duration(?:_seconds)?_count\{[^}]*rlock_end="lost"/m,
    /^rlock_holds_active\{[^}]*rlock_object="lock"/m,
    /^rlock_waiters_active\{[^}]*rlock_object="lock"/m,
    /^rlock_lease_lost_total\{[^}]*rlock_reason="expired"[^}]*\} 1/m,
    /^rlock_renewal_duration(?:_seconds)?_count\{[^}]*rlock_outcome="ok"/m,
  ];
  const rlockLines = scrape.split('\n').filter((line) => line.startsWith('rlock_') && !line.includes('_bucket'));
  console.log(`GET ${metricsUrl}: the rlock series (buckets left out)\n${rlockLines.map((line) => `  ${line}`).join('\n')}`);
  for (const pattern of expected) if (!pattern.test(scrape)) failures.push(`missing from the scrape: ${pattern.source}`);
} catch (error) {
  failures.push(String(error));
} finally {
  await client.close();
  await fleet.stop();
  await exporter.shutdown();
  server.close();
}
if (failures.length > 0) {
  console.error(`FAILED: ${failures.slice(0, 5).join('; ')}`);
  process.exit(1);
}
console.log('OK: every rlock instrument is in the scrape, with its attributes');
