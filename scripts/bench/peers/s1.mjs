// @ts-check
/**
 * Peer S1 — uncontended. One process, N async tasks (64, 8 and 1), task i loops
 * lock(key i) + unlock for the measured window after a warm-up, lease 10 s
 * given explicitly (no renewal runs). Per library and round, in a fresh
 * worker process: pairs/s, pair latency p50/p99 (lock call → unlock resolved),
 * CPU µs per pair of the worker and of redis-server, server commands per pair.
 */
import { Redis } from 'ioredis';
import { snapshot, usageBetween } from '../server-stats.mjs';
import { summarize } from '../stats.mjs';
import { ms, num } from '../table.mjs';
import { comparisonTable, errorNotes, runRounds } from './compare.mjs';
import { LIBRARIES, libraryById } from './libraries.mjs';
import { runWorkers } from './workers.mjs';

export const id = 'peers-s1';
export const title = 'S1 — uncontended: N tasks on N keys, lock + unlock pairs/s, at 64, 8 and 1 tasks';

/**
 * Task counts, one table each: 64 (the headline, the charts' `peers-s1`), 8 (a service with a handful of
 * concurrent requests: neither the client nor Redis is busy) and 1 (a lone task's latency).
 */
const TASK_COUNTS = (process.env.BENCH_S1_TASKS ?? process.env.BENCH_S1_CONCURRENCY ?? '64,8,1').split(',').map(Number);
const LEASE_MS = 10_000;

/**
 * @typedef {object} JobConfig
 * @property {string} lib
 * @property {string} url
 * @property {string} keyPrefix
 * @property {number} concurrency
 * @property {number} warmupMs
 * @property {number} durationMs
 */

/**
 * Worker side: one library, one round.
 * @param {JobConfig} config @param {number} _index @param {() => Promise<unknown>} ready
 */
export async function job(config, _index, ready) {
  const library = libraryById(config.lib);
  if (!library.single) throw new Error(`${library.id} has no single-server lock`);
  const driver = await library.single({ url: config.url, leaseMs: LEASE_MS, keyPrefix: `${config.keyPrefix}-lib` });
  const observer = new Redis(config.url);
  const holders = Array.from({ length: config.concurrency }, (_, i) => driver.holder(`${config.keyPrefix}:${i}`));
  // Connect (and load scripts) before the clock starts.
  await driver.task(async () => {
    const first = /** @type {import('./libraries.mjs').Holder} */ (holders[0]);
    await first.lock();
    await first.unlock();
  });
  await ready();

  const start = performance.now();
  const windowStart = start + config.warmupMs;
  const end = windowStart + config.durationMs;
  /** @type {number[]} */
  const pairMs = [];
  let errors = 0;
  /** @type {string | undefined} */
  let firstError;
  const before = new Promise((resolve) => setTimeout(() => resolve(snapshot(observer)), config.warmupMs));
  const after = new Promise((resolve) => setTimeout(() => resolve(snapshot(observer)), config.warmupMs + config.durationMs));
  await Promise.all(
    holders.map((holder) =>
      driver.task(async () => {
        for (let t0 = performance.now(); t0 < end; t0 = performance.now()) {
          try {
            await holder.lock();
            await holder.unlock();
          } catch (error) {
            errors++;
            firstError ??= error instanceof Error ? `${error.name}: ${error.message}` : String(error);
            if (errors > 10_000) break;
            continue;
          }
          const t1 = performance.now();
          if (t0 >= windowStart && t1 <= end) pairMs.push(t1 - t0);
        }
      }),
    ),
  );
  const usage = usageBetween(await before, await after);
  await driver.close();
  await observer.quit();
  const latency = summarize(pairMs);
  const pairs = pairMs.length || 1;
  return {
    rate: pairMs.length / (config.durationMs / 1000),
    p50: latency.p50,
    p99: latency.p99,
    clientUs: (usage.clientCpu * usage.elapsedMs * 1000) / pairs,
    redisUs: (usage.serverCpu * usage.elapsedMs * 1000) / pairs,
    commands: usage.commands / pairs,
    errors,
    firstError,
  };
}

/** @param {import('../run.mjs').BenchContext} ctx */
export async function run(ctx) {
  const sections = [];
  for (const [index, concurrency] of TASK_COUNTS.entries()) {
    sections.push(await runAt(ctx, concurrency, index === 0 ? id : `${id}@${concurrency}`));
  }
  return sections.join('\n\n');
}

/** One table: every library at `concurrency` tasks. @param {import('../run.mjs').BenchContext} ctx @param {number} concurrency @param {string} tag */
async function runAt(ctx, concurrency, tag) {
  const libraries = LIBRARIES.filter((l) => l.single);
  const outcome = await runRounds({
    libraries,
    rounds: ctx.rounds,
    log: ctx.log,
    tag,
    measureOnce: async (library, round) => {
      const [figures] = await runWorkers({
        count: 1,
        module: import.meta.url,
        fn: 'job',
        timeoutMs: 60_000 + ctx.warmupMs + ctx.durationMs,
        config: /** @type {JobConfig} */ ({
          lib: library.id,
          url: ctx.url,
          keyPrefix: `${ctx.keyPrefix}:p1:${concurrency}:${library.id}:r${round}`,
          concurrency,
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
    headline: { header: 'pairs/s', key: 'rate', format: (v) => num(v), higherIsBetter: true },
    columns: [
      { header: 'pair p50', key: 'p50', format: ms },
      { header: 'pair p99', key: 'p99', format: ms },
      { header: 'client CPU/pair', key: 'clientUs', format: (v) => `${num(v, 1)} µs` },
      { header: 'redis CPU/pair', key: 'redisUs', format: (v) => `${num(v, 1)} µs` },
      { header: 'redis cmds/pair', key: 'commands', format: (v) => num(v, 1) },
      { header: 'errors', key: 'errors', format: (v) => num(v), over: 'sum' },
    ],
  });
  return [
    `### S1 at ${concurrency} task${concurrency === 1 ? '' : 's'}`,
    '',
    table,
    '',
    `${concurrency} task(s) in one process, task i loops lock(key i) + unlock, lease ${LEASE_MS / 1000} s given explicitly; ` +
      `${ctx.warmupMs} ms warm-up then ${ctx.durationMs} ms measured; each library in a fresh worker process, ` +
      `${ctx.rounds} round(s) interleaved (A B C, A B C, …). Figures are medians over rounds; "min – max" spans the rounds; ` +
      '"× raw" and "× best peer" divide the medians (above 1: more pairs/s). A pair = lock call → unlock resolved. ' +
      'CPU/pair: CPU time over the window ÷ pairs, of the worker process and of redis-server; "redis cmds/pair" counts commands inside scripts too. ' +
      'errors: failed pairs, summed over rounds (should be 0).',
    ...notes.map((n) => `\n${n}`),
    ...errorNotes(libraries, outcome).map((n) => `\n${n}`),
  ].join('\n');
}
