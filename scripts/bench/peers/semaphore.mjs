// @ts-check
/**
 * Peer semaphore — S2's shape with a semaphore: 8 permits, 4 forked worker
 * processes × 8 tasks, all on ONE name. The critical section proves the bound
 * on the server through a separate connection: `INCR inside` (above 8 is a
 * violation), `INCR counter`, `DECR inside`. Per library and round:
 * acquisitions/s, wait p50/p99/max (acquire call → acquired), violations,
 * per-worker shares, and the tasks still waiting 2 s after the window (must be 0).
 *
 * Libraries: rlock's semaphore (permits not owned, nothing leased), rlock's
 * permit-expirable semaphore (each permit leased, like redis-semaphore's), and
 * redis-semaphore's `Semaphore` (each acquisition an identifier with a
 * timeout in a sorted set; waiters poll every `retryInterval`).
 */
import { Redis } from 'ioredis';
import { percentile } from '../stats.mjs';
import { ms, num } from '../table.mjs';
import { comparisonTable, errorNotes, runRounds } from './compare.mjs';
import { runWorkers, settledBy } from './workers.mjs';

export const id = 'peers-semaphore';
export const title = 'Semaphore — contended: 8 permits, 4 processes × 8 tasks on ONE name, acquisitions/s';

const PROCESSES = Number(process.env.BENCH_SEM_PROCESSES ?? 4);
const TASKS = Number(process.env.BENCH_SEM_TASKS ?? 8);
const PERMITS = Number(process.env.BENCH_SEM_PERMITS ?? 8);
const LEASE_MS = 10_000;
const HOUR_MS = 3_600_000;
/** After the window, how long waiters get to finish before they count as still waiting. */
const DRAIN_MS = 2_000;

/**
 * @typedef {object} PermitHolder one task's handle on the semaphore
 * @property {() => Promise<void>} acquire waits until a permit is taken
 * @property {() => Promise<void>} release
 */

/**
 * @typedef {object} SemaphoreDriver one client of one library in one process
 * @property {(key: string) => PermitHolder} holder
 * @property {(key: string) => Promise<void>} setUp makes `key` a semaphore of PERMITS permits (idempotent)
 * @property {() => Promise<void>} close
 */

/**
 * @typedef {import('./libraries.mjs').Library & { semaphore: (options: { url: string, keyPrefix: string }) => Promise<SemaphoreDriver> }} SemaphoreLibrary
 */

/**
 * rlock from this checkout, or (`fromBaseline`) from the checkout named by
 * BENCH_RLOCK_BASELINE, for a before/after in one sitting.
 * @param {string} keyPrefix @param {string} url
 */
async function rlockClient(keyPrefix, url, fromBaseline = false) {
  const entry = fromBaseline ? `file://${(process.env.BENCH_RLOCK_BASELINE ?? '').replace(/\/$/, '')}/packages/rlock/dist/esm/index.js` : '@org/rlock';
  const { createClient } = await import(entry);
  return createClient({ redis: url, keyPrefix });
}

/**
 * The plain semaphore's driver, from this checkout or the baseline's.
 * @param {boolean} fromBaseline @returns {SemaphoreLibrary['semaphore']}
 */
const rlockSemaphore =
  (fromBaseline) =>
  async ({ url, keyPrefix }) => {
    const client = await rlockClient(keyPrefix, url, fromBaseline);
    return {
      holder(key) {
        const semaphore = client.getSemaphore(key);
        return { acquire: () => semaphore.acquire(), release: () => semaphore.release() };
      },
      setUp: async (key) => void (await client.getSemaphore(key).trySetPermits(PERMITS)),
      close: async () => void (await client.close()),
    };
  };

/** @type {SemaphoreLibrary[]} */
const LIBRARIES = [
  {
    id: 'rlock',
    name: 'rlock Semaphore',
    kind: 'rlock',
    pkg: '@org/rlock',
    driven: '`createClient({ redis })`, `getSemaphore(name)`: `trySetPermits(8)` once, `acquire()` / `release()`; no setting changed (waits on pub/sub)',
    semaphore: rlockSemaphore(false),
  },
  {
    id: 'rlock-pes',
    name: 'rlock PermitExpirableSemaphore',
    kind: 'rlock',
    pkg: '@org/rlock',
    driven:
      "`getPermitExpirableSemaphore(name)`: `trySetPermits(8)` once, `acquire({ leaseMs: 10000 })` / `permit.release()` (each permit leased, as redis-semaphore's are)",
    async semaphore({ url, keyPrefix }) {
      const client = await rlockClient(keyPrefix, url);
      return {
        holder(key) {
          const semaphore = client.getPermitExpirableSemaphore(key);
          /** @type {{ release(): Promise<void> } | undefined} */
          let permit;
          return {
            acquire: async () => void (permit = await semaphore.acquire({ leaseMs: LEASE_MS })),
            release: async () => void (await permit?.release()),
          };
        },
        setUp: async (key) => void (await client.getPermitExpirableSemaphore(key).trySetPermits(PERMITS)),
        close: async () => void (await client.close()),
      };
    },
  },
  {
    id: 'redis-semaphore',
    name: 'redis-semaphore Semaphore',
    kind: 'peer',
    pkg: 'redis-semaphore',
    driven:
      '`new Semaphore(redis, key, 8, { lockTimeout: 10000, acquireTimeout: 3600000 }).acquire()` / `.release()` (one Semaphore per acquisition); changed: `acquireTimeout` 1 h (default 10 s); polls every `retryInterval` 10 ms (default)',
    async semaphore({ url }) {
      const { Semaphore } = await import('redis-semaphore');
      const redis = new Redis(url);
      return {
        holder(key) {
          /** @type {InstanceType<typeof Semaphore> | undefined} */
          let semaphore;
          return {
            async acquire() {
              semaphore = new Semaphore(redis, key, PERMITS, { lockTimeout: LEASE_MS, acquireTimeout: HOUR_MS });
              await semaphore.acquire();
            },
            release: async () => void (await semaphore?.release()),
          };
        },
        setUp: async () => undefined,
        close: async () => void (await redis.quit()),
      };
    },
  },
];

if (process.env.BENCH_RLOCK_BASELINE) {
  LIBRARIES.splice(1, 0, {
    id: 'rlock-baseline',
    name: `rlock Semaphore baseline (${process.env.BENCH_RLOCK_BASELINE})`,
    kind: 'rlock',
    pkg: '@org/rlock',
    driven: 'as rlock Semaphore, from the BENCH_RLOCK_BASELINE checkout',
    semaphore: rlockSemaphore(true),
  });
}

/** The libraries of this run (`BENCH_LIBRARIES=rlock,redis-semaphore` picks rows, as in the other scenarios). */
const SELECTED = process.env.BENCH_LIBRARIES ? LIBRARIES.filter((l) => (process.env.BENCH_LIBRARIES ?? '').split(',').includes(l.id)) : LIBRARIES;

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
 * Worker side: one process of one library, one round (see s2.mjs, whose loop this is).
 * @param {JobConfig} config @param {number} _index @param {() => Promise<unknown>} ready
 */
export async function job(config, _index, ready) {
  const library = LIBRARIES.find((l) => l.id === config.lib);
  if (!library) throw new Error(`unknown library ${config.lib}`);
  const driver = await library.semaphore({ url: config.url, keyPrefix: `${config.keyPrefix}-lib` });
  const guard = new Redis(config.url); // the critical section's own connection
  const hot = `${config.keyPrefix}:sem`;
  const insideKey = `${config.keyPrefix}:inside`;
  const counterKey = `${config.keyPrefix}:counter`;
  await driver.setUp(hot);
  const holders = Array.from({ length: config.tasks }, () => driver.holder(hot));
  await guard.ping();
  const first = /** @type {PermitHolder} */ (holders[0]);
  await first.acquire();
  await first.release();
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

  const loops = holders.map(async (holder, task) => {
    for (let t0 = performance.now(); t0 < end && failures < 10_000; t0 = performance.now()) {
      waiting[task] = true;
      try {
        await holder.acquire();
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
        if ((await guard.incr(insideKey)) > PERMITS) violations++;
        await guard.incr(counterKey);
        await guard.decr(insideKey);
      } catch (error) {
        fail(error);
      }
      try {
        await holder.release();
      } catch (error) {
        fail(error);
      }
    }
  });
  const drained = await settledBy(loops, end + DRAIN_MS);
  const stillWaiting = drained ? 0 : waiting.filter(Boolean).length;
  if (drained) await driver.close();
  else driver.close().catch(() => undefined);
  guard.disconnect();
  return { acquisitions: perTask.reduce((a, b) => a + b, 0), allAcquisitions, waitsMs, perTask, violations, stillWaiting, failures, firstError };
}

/** @param {import('../run.mjs').BenchContext} ctx */
export async function run(ctx) {
  const admin = new Redis(ctx.url);
  /** @type {string[]} */
  const counterMismatches = [];
  try {
    const outcome = await runRounds({
      libraries: SELECTED,
      rounds: ctx.rounds,
      log: ctx.log,
      tag: id,
      measureOnce: async (library, round) => {
        const keyPrefix = `${ctx.keyPrefix}:psem:${library.id}:r${round}`;
        /** @type {any[]} */
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
        if (counter !== all) counterMismatches.push(`${library.id} round ${round}: counter ${counter}, critical sections ${all}`);
        const waits = Float64Array.from(reports.flatMap((r) => r.waitsMs)).sort();
        const perTask = reports.flatMap((r) => r.perTask);
        return {
          rate: total / (ctx.durationMs / 1000),
          p50: percentile(waits, 50),
          p99: percentile(waits, 99),
          max: waits.length ? /** @type {number} */ (waits[waits.length - 1]) : Number.NaN,
          violations: reports.reduce((sum, r) => sum + r.violations, 0),
          stillWaiting: reports.reduce((sum, r) => sum + r.stillWaiting, 0),
          failures: reports.reduce((sum, r) => sum + r.failures, 0),
          shares: reports.map((r) => Math.round((100 * r.acquisitions) / (total || 1))).join('/'),
          taskMin: Math.min(...perTask),
          taskMax: Math.max(...perTask),
          firstError: reports.find((r) => r.firstError)?.firstError,
          unhandled: reports.map((r) => r.unhandled).find(Boolean),
        };
      },
    });
    const { table, notes } = comparisonTable({
      libraries: SELECTED,
      outcome,
      headline: { header: 'acquisitions/s', key: 'rate', format: (v) => num(v), higherIsBetter: true },
      columns: [
        { header: 'wait p50', key: 'p50', format: ms },
        { header: 'wait p99', key: 'p99', format: ms },
        { header: 'wait max', key: 'max', format: ms },
        { header: 'wait max (worst round)', key: 'max', format: ms, over: 'max' },
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
      `${PROCESSES} forked processes × ${TASKS} tasks on one semaphore of ${PERMITS} permits; each acquisition runs the critical section through a separate ` +
        `connection (\`INCR inside\`: above ${PERMITS} is a violation; \`INCR counter\`; \`DECR inside\`), then releases. ` +
        `Wait = acquire call → acquired, for calls started in the window; ${ctx.rounds} interleaved rounds, median (wait max: median of the rounds' maxima, and the worst round). ` +
        'No hand-written raw semaphore is measured, so "× raw" is empty.',
      '',
      ...notes,
      ...errorNotes(SELECTED, outcome),
      ...(counterMismatches.length
        ? [`Counter mismatches: ${counterMismatches.join('; ')}.`]
        : ['The counter equalled the critical sections run in every round.']),
    ].join('\n');
  } finally {
    await admin.quit();
  }
}
