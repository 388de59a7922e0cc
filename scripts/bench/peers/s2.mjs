// @ts-check
/**
 * Peer S2 — contended. 4 forked worker processes × 8 tasks, all on ONE lock
 * name. The critical section proves exclusion on the server through a
 * separate connection: `SET inside 1 NX` (must be OK, else a violation),
 * `INCR counter`, `DEL inside`. Per library and round: acquisitions/s, wait
 * p50/p99/max (lock call → acquired), violations, per-worker shares, and the
 * tasks still waiting 2 s after the window (must be 0).
 */
import { Redis } from 'ioredis';
import { percentile } from '../stats.mjs';
import { ms, num } from '../table.mjs';
import { comparisonTable, errorNotes, runRounds } from './compare.mjs';
import { LIBRARIES, libraryById } from './libraries.mjs';
import { runWorkers, settledBy } from './workers.mjs';

export const id = 'peers-s2';
export const title = 'S2 — contended: 4 processes × 8 tasks on ONE name, acquisitions/s';

const PROCESSES = Number(process.env.BENCH_S2_PROCESSES ?? 4);
const TASKS = Number(process.env.BENCH_S2_TASKS ?? 8);
const LEASE_MS = 10_000;
/** After the window, how long waiters get to finish before they count as still waiting. */
const DRAIN_MS = 2_000;

/**
 * @typedef {object} JobConfig
 * @property {string} lib
 * @property {string} url
 * @property {string} keyPrefix
 * @property {number} tasks
 * @property {number} warmupMs
 * @property {number} durationMs
 */

/**
 * @typedef {object} WorkerReport
 * @property {number} acquisitions acquired inside the window
 * @property {number} allAcquisitions acquired during the whole run (critical sections run)
 * @property {number[]} waitsMs of every lock() call started in the window that got the lock
 * @property {number[]} perTask acquisitions inside the window
 * @property {number} violations critical sections whose `SET inside 1 NX` was refused
 * @property {number} stillWaiting tasks still inside lock() DRAIN_MS after the window
 * @property {number} failures lock(), critical-section or unlock() calls that threw
 * @property {string} [firstError]
 */

/**
 * Worker side: one process of one library, one round.
 * @param {JobConfig} config @param {number} _index @param {() => Promise<unknown>} ready
 * @returns {Promise<WorkerReport>}
 */
export async function job(config, _index, ready) {
  const library = libraryById(config.lib);
  if (!library.single) throw new Error(`${library.id} has no single-server lock`);
  const driver = await library.single({ url: config.url, leaseMs: LEASE_MS, keyPrefix: `${config.keyPrefix}-lib` });
  const guard = new Redis(config.url); // the critical section's own connection
  const hot = `${config.keyPrefix}:hot`;
  const insideKey = `${config.keyPrefix}:inside`;
  const counterKey = `${config.keyPrefix}:counter`;
  const holders = Array.from({ length: config.tasks }, () => driver.holder(hot));
  await guard.ping();
  await driver.task(async () => {
    const first = /** @type {import('./libraries.mjs').Holder} */ (holders[0]);
    await first.lock();
    await first.unlock();
  });
  await ready();

  const windowStart = performance.now() + config.warmupMs;
  const end = windowStart + config.durationMs;
  /** @type {number[]} */
  const waitsMs = [];
  const perTask = new Array(config.tasks).fill(0);
  const waiting = new Array(config.tasks).fill(false);
  let allAcquisitions = 0;
  let violations = 0;
  let failures = 0;
  /** @type {string | undefined} */
  let firstError;
  const fail = (/** @type {unknown} */ error) => {
    failures++;
    firstError ??= error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  };

  const loops = holders.map((holder, task) =>
    driver.task(async () => {
      for (let t0 = performance.now(); t0 < end && failures < 10_000; t0 = performance.now()) {
        waiting[task] = true;
        try {
          await holder.lock();
        } catch (error) {
          fail(error);
          continue;
        } finally {
          waiting[task] = false;
        }
        const t1 = performance.now();
        allAcquisitions++;
        if (t0 >= windowStart) waitsMs.push(t1 - t0);
        if (t1 >= windowStart && t1 <= end) perTask[task]++;
        try {
          if ((await guard.set(insideKey, '1', 'NX')) !== 'OK') violations++;
          await guard.incr(counterKey);
          await guard.del(insideKey);
        } catch (error) {
          fail(error);
        }
        try {
          await holder.unlock();
        } catch (error) {
          fail(error);
        }
      }
    }),
  );
  const drained = await settledBy(loops, end + DRAIN_MS);
  const stillWaiting = drained ? 0 : waiting.filter(Boolean).length;
  if (drained) await driver.close();
  else {
    // Close without waiting for it: a library may not close while a waiter hangs.
    driver.close().catch(() => undefined);
  }
  guard.disconnect();
  return { acquisitions: perTask.reduce((a, b) => a + b, 0), allAcquisitions, waitsMs, perTask, violations, stillWaiting, failures, firstError };
}

/** @param {import('../run.mjs').BenchContext} ctx */
export async function run(ctx) {
  const libraries = LIBRARIES.filter((l) => l.single && l.id !== 'raw-ap');
  const admin = new Redis(ctx.url);
  /** @type {string[]} */
  const counterMismatches = [];
  try {
    const outcome = await runRounds({
      libraries,
      rounds: ctx.rounds,
      log: ctx.log,
      tag: id,
      measureOnce: async (library, round) => {
        const keyPrefix = `${ctx.keyPrefix}:p2:${library.id}:r${round}`;
        /** @type {WorkerReport[]} */
        const reports = await runWorkers({
          count: PROCESSES,
          module: import.meta.url,
          fn: 'job',
          timeoutMs: 60_000 + ctx.warmupMs + ctx.durationMs + DRAIN_MS,
          config: /** @type {JobConfig} */ ({ lib: library.id, url: ctx.url, keyPrefix, tasks: TASKS, warmupMs: ctx.warmupMs, durationMs: ctx.durationMs }),
        });
        const total = reports.reduce((sum, r) => sum + r.acquisitions, 0);
        const all = reports.reduce((sum, r) => sum + r.allAcquisitions, 0);
        const counter = Number((await admin.get(`${keyPrefix}:counter`)) ?? 0);
        // Every critical section increments the counter once; a task still waiting could not add to it.
        if (counter !== all) counterMismatches.push(`${library.id} round ${round}: counter ${counter}, critical sections ${all}`);
        const waits = Float64Array.from(reports.flatMap((r) => r.waitsMs)).sort();
        const perTask = reports.flatMap((r) => r.perTask);
        return {
          rate: total / (ctx.durationMs / 1000),
          p50: percentile(waits, 50),
          p99: percentile(waits, 99),
          max: waits.length ? /** @type {number} */ (waits[waits.length - 1]) : Number.NaN,
          // The distribution for the charts (scripts/bench/run.mjs --json): p1 … p99, then p99.9 and the max.
          waitQuantiles: JSON.stringify(
            waits.length ? [...Array.from({ length: 99 }, (_, i) => percentile(waits, i + 1)), percentile(waits, 99.9), waits[waits.length - 1]] : [],
          ),
          violations: reports.reduce((sum, r) => sum + r.violations, 0),
          stillWaiting: reports.reduce((sum, r) => sum + r.stillWaiting, 0),
          failures: reports.reduce((sum, r) => sum + r.failures, 0),
          minShare: Math.min(...reports.map((r) => r.acquisitions / (total || 1))),
          maxShare: Math.max(...reports.map((r) => r.acquisitions / (total || 1))),
          shares: reports.map((r) => Math.round((100 * r.acquisitions) / (total || 1))).join('/'),
          taskMin: Math.min(...perTask),
          taskMax: Math.max(...perTask),
          firstError: reports.find((r) => r.firstError)?.firstError,
          unhandled: reports.map((r) => /** @type {any} */ (r).unhandled).find(Boolean),
        };
      },
    });
    const { table, notes } = comparisonTable({
      libraries,
      outcome,
      headline: { header: 'acquisitions/s', key: 'rate', format: (v) => num(v), higherIsBetter: true },
      columns: [
        { header: 'wait p50', key: 'p50', format: ms },
        { header: 'wait p99', key: 'p99', format: ms },
        { header: 'wait max', key: 'max', format: ms },
        { header: 'violations', key: 'violations', format: (v) => num(v), over: 'sum' },
        { header: 'still waiting', key: 'stillWaiting', format: (v) => num(v), over: 'sum' },
        { header: 'failures', key: 'failures', format: (v) => num(v), over: 'sum' },
      ],
      textHeaders: ['worker shares (median round)', 'per task min–max'],
      textColumns: (runs) => {
        const sorted = [...runs].sort((a, b) => Number(a.rate) - Number(b.rate));
        const mid = /** @type {import('./compare.mjs').Figures} */ (sorted[Math.floor((sorted.length - 1) / 2)]);
        return [`${mid.shares} %`, `${Math.min(...runs.map((r) => Number(r.taskMin)))}–${Math.max(...runs.map((r) => Number(r.taskMax)))}`];
      },
    });
    return [
      table,
      '',
      `${PROCESSES} forked processes × ${TASKS} tasks on one name; each acquisition runs the critical section through a separate ` +
        'connection (`SET inside 1 NX` must be OK, else a violation; `INCR counter`; `DEL inside`), then unlocks. ' +
        `Lease ${LEASE_MS / 1000} s; ${ctx.warmupMs} ms warm-up then ${ctx.durationMs} ms measured; ${ctx.rounds} round(s), libraries interleaved. ` +
        'Wait = lock call → acquired, over the calls started in the window. "still waiting" = tasks still inside lock() ' +
        `${DRAIN_MS / 1000} s after the window, summed over rounds (must be 0), as are violations and failures. ` +
        "Worker shares: each process's part of the acquisitions in the median round (fair: " +
        `${Math.round(100 / PROCESSES)} % each); per task min–max: fewest and most acquisitions of any task in any round. ` +
        'The raw row spins on SET NX without pause. Throughput alone favours unfair locks: a poller whose holder re-takes the lock ' +
        'at once scores high acquisitions/s with a sub-millisecond wait p50, while other tasks starve (wait max, per task min).',
      ...notes.map((n) => `\n${n}`),
      ...errorNotes(libraries, outcome).map((n) => `\n${n}`),
      ...(counterMismatches.length
        ? [`\nCounter check (INCR count = critical sections run): ${counterMismatches.join('; ')}.`]
        : ["\nCounter check: every critical section's INCR is on the server (counter = acquisitions, every run)."]),
    ].join('\n');
  } finally {
    await admin.quit();
  }
}
