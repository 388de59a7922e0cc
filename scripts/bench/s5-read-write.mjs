// @ts-check
/**
 * S5 — a read-heavy mix on one name: PROCESSES (4) processes × TASKS (8) tasks,
 * each call a read with probability READ_SHARE (0.9), else a write. Two
 * variants, interleaved round by round in fresh processes:
 *
 *   lock   one plain RLock for reads and writes alike (what users have without
 *          a read-write lock: every read excludes every other)
 *   rw     getReadWriteLock(name): readLock() for reads, writeLock() for writes
 *
 * The critical section proves the lock's promise on the server through a
 * separate connection, as S2 does: a read `INCR readers`, `EXISTS writer`
 * (must be 0), `DECR readers`; a write `SET writer 1 NX` (must be OK),
 * `GET readers` (must be 0), `DEL writer`. Reported: acquisitions/s (reads and
 * writes), wait p50/p99/max of each, violations (a read beside a write, two
 * writes), failures.
 */
import { Redis } from 'ioredis';
import { createClient } from '@org/rlock';
import { runWorkers, settledBy } from './peers/workers.mjs';
import { median, percentile } from './stats.mjs';
import { markdownTable, ms, num } from './table.mjs';

export const id = 's5';
export const title = 's5 (rlock only) — read-heavy mix: 90 % reads, 4 processes × 8 tasks on ONE name, read-write lock beside the plain lock';

const PROCESSES = Number(process.env.BENCH_S5_PROCESSES ?? 4);
const TASKS = Number(process.env.BENCH_S5_TASKS ?? 8);
const READ_SHARE = Number(process.env.BENCH_S5_READ_SHARE ?? 0.9);
const LEASE_MS = 10_000;
/** After the window, how long calls get to finish before the worker reports them as still waiting. */
const DRAIN_MS = 5_000;
const VARIANTS = /** @type {const} */ (['lock', 'rw']);

/**
 * @typedef {object} JobConfig
 * @property {'lock' | 'rw'} variant
 * @property {string} url
 * @property {string} keyPrefix
 * @property {number} tasks
 * @property {number} warmupMs
 * @property {number} durationMs
 */

/**
 * @typedef {object} WorkerReport
 * @property {number} reads acquired inside the window
 * @property {number} writes acquired inside the window
 * @property {number[]} readWaitsMs of read calls started in the window
 * @property {number[]} writeWaitsMs of write calls started in the window
 * @property {number} violations
 * @property {number} failures
 * @property {number} stillWaiting
 * @property {string} [firstError]
 */

/**
 * Worker side: one process of one variant, one round.
 * @param {JobConfig} config @param {number} _index @param {() => Promise<unknown>} ready
 * @returns {Promise<WorkerReport>}
 */
export async function job(config, _index, ready) {
  const client = createClient({ redis: config.url, keyPrefix: `${config.keyPrefix}-lib` });
  const guard = new Redis(config.url);
  const readersKey = `${config.keyPrefix}:readers`;
  const writerKey = `${config.keyPrefix}:writer`;
  const name = 'mix';
  /** @returns {{ read: import('@org/rlock').RLock, write: import('@org/rlock').RLock }} */
  const locksOf = () => {
    if (config.variant === 'lock') {
      const lock = client.getLock(name);
      return { read: lock, write: lock };
    }
    const rw = client.getReadWriteLock(name);
    return { read: rw.readLock(), write: rw.writeLock() };
  };
  const locks = locksOf();
  // Connect and load scripts before the clock starts.
  await client.task(async () => {
    await locks.write.lock({ leaseMs: LEASE_MS });
    await locks.write.unlock();
  });
  await guard.ping();
  await ready();

  const windowStart = performance.now() + config.warmupMs;
  const end = windowStart + config.durationMs;
  /** @type {number[]} */
  const readWaitsMs = [];
  /** @type {number[]} */
  const writeWaitsMs = [];
  let reads = 0;
  let writes = 0;
  let violations = 0;
  let failures = 0;
  /** @type {string | undefined} */
  let firstError;
  const waiting = new Array(config.tasks).fill(false);
  const fail = (/** @type {unknown} */ error) => {
    failures++;
    firstError ??= error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  };

  const loops = Array.from({ length: config.tasks }, (_, task) =>
    client.task(async () => {
      for (let t0 = performance.now(); t0 < end && failures < 10_000; t0 = performance.now()) {
        const isRead = Math.random() < READ_SHARE;
        const lock = isRead ? locks.read : locks.write;
        waiting[task] = true;
        try {
          await lock.lock({ leaseMs: LEASE_MS });
        } catch (error) {
          fail(error);
          continue;
        } finally {
          waiting[task] = false;
        }
        const t1 = performance.now();
        if (t0 >= windowStart) (isRead ? readWaitsMs : writeWaitsMs).push(t1 - t0);
        if (t1 >= windowStart && t1 <= end) isRead ? reads++ : writes++;
        try {
          if (isRead) {
            await guard.incr(readersKey);
            if ((await guard.exists(writerKey)) !== 0) violations++;
            await guard.decr(readersKey);
          } else {
            if ((await guard.set(writerKey, '1', 'NX')) !== 'OK') violations++;
            if (Number((await guard.get(readersKey)) ?? 0) !== 0) violations++;
            await guard.del(writerKey);
          }
        } catch (error) {
          fail(error);
        }
        try {
          await lock.unlock();
        } catch (error) {
          fail(error);
        }
      }
    }),
  );
  const drained = await settledBy(loops, end + DRAIN_MS);
  const stillWaiting = drained ? 0 : waiting.filter(Boolean).length;
  if (drained) await client.close();
  guard.disconnect();
  return { reads, writes, readWaitsMs, writeWaitsMs, violations, failures, stillWaiting, firstError };
}

/** @param {number[]} values */
const sortedOf = (values) => Float64Array.from(values).sort();

/** @param {import('./run.mjs').BenchContext} ctx */
export async function run(ctx) {
  // Two variants compared: at least 3 interleaved rounds, whatever the rlock-only default.
  const rounds = Math.max(3, ctx.rounds);
  /** @type {Record<string, Record<string, number>[]>} */
  const byVariant = { lock: [], rw: [] };
  /** @type {string[]} */
  const errors = [];
  for (let round = 0; round < rounds; round++) {
    for (const variant of round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()) {
      ctx.log(`s5: round ${round + 1}/${rounds}, ${variant}`);
      /** @type {WorkerReport[]} */
      const reports = await runWorkers({
        count: PROCESSES,
        module: import.meta.url,
        fn: 'job',
        timeoutMs: 60_000 + ctx.warmupMs + ctx.durationMs + DRAIN_MS,
        config: /** @type {JobConfig} */ ({
          variant,
          url: ctx.url,
          keyPrefix: `${ctx.keyPrefix}:s5:${variant}:r${round}`,
          tasks: TASKS,
          warmupMs: ctx.warmupMs,
          durationMs: ctx.durationMs,
        }),
      });
      const seconds = ctx.durationMs / 1000;
      const readWaits = sortedOf(reports.flatMap((r) => r.readWaitsMs));
      const writeWaits = sortedOf(reports.flatMap((r) => r.writeWaitsMs));
      const reads = reports.reduce((sum, r) => sum + r.reads, 0);
      const writes = reports.reduce((sum, r) => sum + r.writes, 0);
      byVariant[variant]?.push({
        rate: (reads + writes) / seconds,
        readRate: reads / seconds,
        writeRate: writes / seconds,
        readP50: percentile(readWaits, 50),
        readP99: percentile(readWaits, 99),
        readMax: readWaits.length ? Number(readWaits[readWaits.length - 1]) : Number.NaN,
        writeP50: percentile(writeWaits, 50),
        writeP99: percentile(writeWaits, 99),
        writeMax: writeWaits.length ? Number(writeWaits[writeWaits.length - 1]) : Number.NaN,
        violations: reports.reduce((sum, r) => sum + r.violations, 0),
        failures: reports.reduce((sum, r) => sum + r.failures, 0),
        stillWaiting: reports.reduce((sum, r) => sum + r.stillWaiting, 0),
      });
      const firstError = reports.find((r) => r.firstError)?.firstError;
      if (firstError) errors.push(`${variant} round ${round + 1}: ${firstError}`);
    }
  }
  /** @param {string} variant @param {string} key */
  const med = (variant, key) => median((byVariant[variant] ?? []).map((figures) => Number(figures[key])));
  /** @param {string} variant @param {string} key */
  const sum = (variant, key) => (byVariant[variant] ?? []).reduce((total, figures) => total + Number(figures[key]), 0);
  const base = med('lock', 'rate');
  const table = markdownTable(
    [
      'variant',
      'acquisitions/s',
      '× plain lock',
      'reads/s',
      'writes/s',
      'read wait p50',
      'read p99',
      'read max',
      'write wait p50',
      'write p99',
      'write max',
      'violations',
      'failures',
      'still waiting',
    ],
    VARIANTS.map((variant) => [
      variant === 'lock' ? 'plain lock (getLock) for reads and writes' : 'read-write lock (readLock / writeLock)',
      num(med(variant, 'rate')),
      `${(med(variant, 'rate') / base).toFixed(2)}×`,
      num(med(variant, 'readRate')),
      num(med(variant, 'writeRate')),
      ms(med(variant, 'readP50')),
      ms(med(variant, 'readP99')),
      ms(med(variant, 'readMax')),
      ms(med(variant, 'writeP50')),
      ms(med(variant, 'writeP99')),
      ms(med(variant, 'writeMax')),
      num(sum(variant, 'violations')),
      num(sum(variant, 'failures')),
      num(sum(variant, 'stillWaiting')),
    ]),
    'lrrrrrrrrrrrrr',
  );
  const lines = [
    table,
    '',
    `${PROCESSES} processes × ${TASKS} tasks on one name, ${Math.round(READ_SHARE * 100)} % reads, lease ${LEASE_MS} ms; ` +
      `critical section of three commands on a separate connection that check the promise (a read beside a write, or two writes, is a violation). ` +
      `Medians of ${rounds} interleaved rounds (${ctx.warmupMs} ms warm-up, ${ctx.durationMs} ms measured each), fresh processes per round; ` +
      `violations, failures and still-waiting calls are summed over rounds.`,
  ];
  if (errors.length) lines.push('', `Failures: ${errors.join('; ')}`);
  return lines.join('\n');
}
