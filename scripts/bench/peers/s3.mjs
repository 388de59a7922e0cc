// @ts-check
/**
 * Peer S3 — Redlock latency over 5 independent masters (a RedisFleet of its
 * own). One task, sequential lock + unlock of its own key: acquire latency
 * p50/p99 (lock call → acquired) and pairs/s, per library and round, each in a
 * fresh worker process.
 */
import { summarize } from '../stats.mjs';
import { ms, num } from '../table.mjs';
import { startFleet } from '../servers.mjs';
import { comparisonTable, errorNotes, runRounds } from './compare.mjs';
import { LIBRARIES, libraryById } from './libraries.mjs';
import { runWorkers } from './workers.mjs';

export const id = 'peers-s3';
export const title = 'S3 — Redlock over 5 masters: one task, sequential lock + unlock, acquire latency';

const MASTERS = Number(process.env.BENCH_PEERS_MASTERS ?? 5);
const LEASE_MS = 10_000;

/**
 * @typedef {object} JobConfig
 * @property {string} lib
 * @property {string[]} urls
 * @property {string} keyPrefix
 * @property {number} warmupMs
 * @property {number} durationMs
 */

/**
 * Worker side: one library, one round.
 * @param {JobConfig} config @param {number} _index @param {() => Promise<unknown>} ready
 */
export async function job(config, _index, ready) {
  const library = libraryById(config.lib);
  if (!library.redlock) throw new Error(`${library.id} has no Redlock`);
  const driver = await library.redlock({ urls: config.urls, leaseMs: LEASE_MS, keyPrefix: `${config.keyPrefix}-lib` });
  const holder = driver.holder(`${config.keyPrefix}:solo`);
  await ready();
  const windowStart = performance.now() + config.warmupMs;
  const end = windowStart + config.durationMs;
  /** @type {number[]} */
  const acquireMs = [];
  let pairs = 0;
  let errors = 0;
  /** @type {string | undefined} */
  let firstError;
  await driver.task(async () => {
    for (let t0 = performance.now(); t0 < end; t0 = performance.now()) {
      let t1;
      try {
        await holder.lock();
        t1 = performance.now();
        await holder.unlock();
      } catch (error) {
        errors++;
        firstError ??= error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        if (errors > 1_000) break;
        continue;
      }
      const t2 = performance.now();
      if (t0 >= windowStart && t2 <= end) {
        acquireMs.push(t1 - t0);
        pairs++;
      }
    }
  });
  await driver.close();
  const latency = summarize(acquireMs);
  return { p50: latency.p50, p99: latency.p99, rate: pairs / (config.durationMs / 1000), errors, firstError };
}

/** @param {import('../run.mjs').BenchContext} ctx */
export async function run(ctx) {
  const libraries = LIBRARIES.filter((l) => l.redlock);
  ctx.log(`${id}: starting ${MASTERS} masters`);
  const fleet = await startFleet(MASTERS);
  try {
    const urls = Array.from({ length: MASTERS }, (_, i) => fleet.url(i));
    const outcome = await runRounds({
      libraries,
      rounds: ctx.rounds,
      log: ctx.log,
      tag: id,
      measureOnce: async (library, round) => {
        const [figures] = await runWorkers({
          count: 1,
          module: import.meta.url,
          fn: 'job',
          timeoutMs: 60_000 + ctx.warmupMs + ctx.durationMs,
          config: /** @type {JobConfig} */ ({
            lib: library.id,
            urls,
            keyPrefix: `${ctx.keyPrefix}:p3:${library.id}:r${round}`,
            warmupMs: ctx.warmupMs,
            durationMs: ctx.durationMs,
          }),
        });
        return figures;
      },
    });
    const { table, notes } = comparisonTable({
      libraries,
      outcome,
      headline: { header: 'acquire p50', key: 'p50', format: ms, higherIsBetter: false },
      columns: [
        { header: 'acquire p99', key: 'p99', format: ms },
        { header: 'pairs/s', key: 'rate', format: (v) => num(v) },
        { header: 'errors', key: 'errors', format: (v) => num(v), over: 'sum' },
      ],
    });
    return [
      table,
      '',
      `${MASTERS} independent masters (quorum ${Math.floor(MASTERS / 2) + 1}), one task taking and releasing its own key in a loop, ` +
        `lease ${LEASE_MS / 1000} s; ${ctx.warmupMs} ms warm-up then ${ctx.durationMs} ms measured; ${ctx.rounds} round(s), libraries interleaved. ` +
        'Acquire latency = lock call → acquired; pairs/s = sequential lock + unlock pairs. Here lower is better: ' +
        '"× raw" and "× best peer" divide the medians, so above 1 means slower. The raw row is a hand-written Redlock: ' +
        '`SET NX PX` on all masters at once, held on a majority, `EVALSHA` compare-and-delete on all at once. ' +
        'node-redisson has no Redlock and is not in this table.',
      ...notes.map((n) => `\n${n}`),
      ...errorNotes(libraries, outcome).map((n) => `\n${n}`),
    ].join('\n');
  } finally {
    await fleet.stop();
  }
}
