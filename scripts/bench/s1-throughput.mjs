// @ts-check
/**
 * S1 — uncontended throughput. CONCURRENCY (64) loops, each on its own key, take
 * and release a lock as fast as they can for the measured duration, after a
 * warm-up, in this one process:
 *
 * - raw: the textbook single-instance lock, `SET key token NX PX 30000` then an
 *   `EVALSHA` compare-and-delete, through one ioredis connection with
 *   enableAutoPipelining (labelled so; the peer comparison's raw baseline has
 *   none, as users write it). Not reentrant, no fencing token, no watchdog, no
 *   wake-up of waiters: the floor of what a lock costs on this machine.
 * - rlock, leaseMs: `client.task` around the loop, `lock.lock({ leaseMs: 30000 })`
 *   then `lock.unlock()`.
 * - rlock, watchdog: the same with `lock.lock()` (lease kept by the watchdog).
 *
 * All variants run back to back against the same server, with the same
 * concurrency and duration; the ratio rlock / raw is the number to watch.
 */
import { Redis } from 'ioredis';
import { createClient } from '@org/rlock';
import { median, summarize } from './stats.mjs';
import { markdownTable, ms, num } from './table.mjs';
import { snapshot, usageBetween } from './server-stats.mjs';

export const id = 's1';
export const title = 's1 (rlock only) — uncontended throughput: lock + unlock pairs/s, 64 concurrent tasks on distinct keys';

const CONCURRENCY = Number(process.env.BENCH_S1_CONCURRENCY ?? 64);
const RAW_LEASE_MS = 30_000;

const COMPARE_AND_DELETE = "if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('del',KEYS[1]) end return 0";

/**
 * @typedef {object} LoopResult
 * @property {number} pairs pairs completed inside the measured window
 * @property {number[]} pairMs duration of each measured pair, ms
 * @property {number} errors pairs whose acquire or release did not succeed (should be 0)
 * @property {string | undefined} firstError
 * @property {import('./server-stats.mjs').Usage} usage over the measured window
 */

/**
 * Runs `concurrency` loops of `pair(i)` for warmupMs + durationMs. Each loop
 * stops by itself once the duration has passed; only pairs that start after the
 * warm-up and end before the end count. Server and CPU usage are sampled at the
 * window's edges, without pausing the loops.
 * @param {object} options
 * @param {number} options.concurrency
 * @param {number} options.warmupMs
 * @param {number} options.durationMs
 * @param {Redis} options.observer a separate connection for INFO snapshots
 * @param {(body: () => Promise<void>, index: number) => Promise<void>} options.runLoop
 *   runs loop `index`'s `body` inside whatever context the variant needs (e.g. a task)
 * @param {(index: number) => Promise<boolean>} options.pair one lock + unlock; false if either failed
 * @returns {Promise<LoopResult>}
 */
async function measure({ concurrency, warmupMs, durationMs, observer, runLoop, pair }) {
  const start = performance.now();
  const windowStart = start + warmupMs;
  const end = windowStart + durationMs;
  /** @type {number[]} */
  const pairMs = [];
  let errors = 0;
  /** @type {string | undefined} */
  let firstError;

  /** @type {Promise<import('./server-stats.mjs').Snapshot>} */
  const before = new Promise((resolve) => setTimeout(() => resolve(snapshot(observer)), warmupMs));
  /** @type {Promise<import('./server-stats.mjs').Snapshot>} */
  const after = new Promise((resolve) => setTimeout(() => resolve(snapshot(observer)), warmupMs + durationMs));

  const loops = Array.from({ length: concurrency }, (_, index) =>
    runLoop(async () => {
      for (let t0 = performance.now(); t0 < end; t0 = performance.now()) {
        let ok = false;
        try {
          ok = await pair(index);
        } catch (error) {
          firstError ??= error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        }
        const t1 = performance.now();
        if (!ok) errors++;
        else if (t0 >= windowStart && t1 <= end) pairMs.push(t1 - t0);
      }
    }, index),
  );
  await Promise.all(loops);
  return { pairs: pairMs.length, pairMs, errors, firstError, usage: usageBetween(await before, await after) };
}

/**
 * @typedef {object} Variant
 * @property {string} name
 * @property {() => Promise<{ runLoop: Parameters<typeof measure>[0]['runLoop'], pair: (i: number) => Promise<boolean>, close: () => Promise<void> }>} setUp
 */

/**
 * @param {import('./run.mjs').BenchContext} ctx
 * @returns {Variant[]}
 */
function variants(ctx) {
  /** @type {Variant} */
  const raw = {
    name: 'raw SET NX PX + EVALSHA del, auto-pipelined connection',
    async setUp() {
      const redis = new Redis(ctx.url, { enableAutoPipelining: true });
      const sha = /** @type {string} */ (await redis.script('LOAD', COMPARE_AND_DELETE));
      const keys = Array.from({ length: CONCURRENCY }, (_, i) => `${ctx.keyPrefix}:raw:${i}`);
      const tokenBase = `${process.pid}-${Math.random().toString(36).slice(2)}-`;
      let sequence = 0;
      return {
        runLoop: (body) => body(),
        async pair(i) {
          const key = /** @type {string} */ (keys[i]);
          const token = tokenBase + sequence++;
          const set = await redis.set(key, token, 'PX', RAW_LEASE_MS, 'NX');
          const deleted = await redis.evalsha(sha, 1, key, token);
          return set === 'OK' && deleted === 1;
        },
        close: async () => void (await redis.quit()),
      };
    },
  };

  /**
   * @param {string} name
   * @param {number | undefined} leaseMs
   * @returns {Variant}
   */
  const rlock = (name, leaseMs) => ({
    name,
    async setUp() {
      const client = createClient({ redis: ctx.url, keyPrefix: `${ctx.keyPrefix}-rlock` });
      const locks = Array.from({ length: CONCURRENCY }, (_, i) => client.getLock(`s1:${i}`));
      const options = leaseMs === undefined ? undefined : { leaseMs };
      return {
        // One task per loop, as one request (or thread) takes and releases its lock again and again.
        runLoop: (body) => client.task(body),
        async pair(i) {
          const lock = /** @type {(typeof locks)[number]} */ (locks[i]);
          await lock.lock(options);
          await lock.unlock();
          return true;
        },
        close: async () => void (await client.close()),
      };
    },
  });

  return [raw, rlock('rlock, lock({ leaseMs: 30000 })', 30_000), rlock('rlock, lock() (watchdog lease)', undefined)];
}

/**
 * Median over runs of CPU time per measured pair, in µs.
 * @param {LoopResult[]} runs
 * @param {'clientCpu' | 'serverCpu'} side
 */
function cpuPerPair(runs, side) {
  return `${num(median(runs.map((r) => (r.usage[side] * r.usage.elapsedMs * 1000) / (r.pairs || 1))), 1)} µs`;
}

/**
 * @param {import('./run.mjs').BenchContext} ctx
 * @returns {Promise<string>} the section's Markdown
 */
export async function run(ctx) {
  const observer = new Redis(ctx.url);
  /** @type {Map<string, LoopResult[]>} */
  const results = new Map();
  /** @type {Map<string, string>} */
  const skipped = new Map();
  const list = variants(ctx);
  try {
    // Rounds interleave the variants, so a slow patch of the machine hits all of them.
    for (let round = 1; round <= ctx.rounds; round++) {
      for (const variant of list) {
        if (skipped.has(variant.name)) continue;
        ctx.log(`s1: ${variant.name}${ctx.rounds > 1 ? ` (round ${round}/${ctx.rounds})` : ''}`);
        let setup;
        try {
          setup = await variant.setUp();
        } catch (error) {
          skipped.set(variant.name, error instanceof Error ? error.message : String(error));
          continue;
        }
        try {
          const result = await measure({
            concurrency: CONCURRENCY,
            warmupMs: ctx.warmupMs,
            durationMs: ctx.durationMs,
            observer,
            ...setup,
          });
          if (result.pairs === 0 && result.errors > 0) {
            // e.g. the watchdog is not wired yet: report it instead of a zero.
            skipped.set(variant.name, result.firstError ?? 'every pair failed');
          } else {
            results.set(variant.name, [...(results.get(variant.name) ?? []), result]);
          }
        } finally {
          await setup.close();
        }
      }
    }
  } finally {
    await observer.quit();
  }

  const rawRuns = results.get(/** @type {Variant} */ (list[0]).name);
  const rawRate = rawRuns ? median(rawRuns.map((r) => r.pairs / (ctx.durationMs / 1000))) : Number.NaN;
  const rows = [];
  for (const variant of list) {
    const runs = results.get(variant.name);
    if (!runs) {
      rows.push([variant.name, 'skipped', '', '', '', '', '', '', '', '']);
      continue;
    }
    const rate = median(runs.map((r) => r.pairs / (ctx.durationMs / 1000)));
    const latency = summarize(runs.flatMap((r) => r.pairMs));
    const pairs = runs.reduce((sum, r) => sum + r.pairs, 0) || 1;
    const scripts = runs.reduce(
      (sum, r) => sum + Object.entries(r.usage.calls).reduce((s, [name, calls]) => (/^(eval|fcall)/.test(name) ? s + calls : s), 0),
      0,
    );
    const commands = runs.reduce((sum, r) => sum + r.usage.commands, 0);
    rows.push([
      variant.name,
      num(rate),
      variant === list[0] ? '1.00' : (rate / rawRate).toFixed(2),
      ms(latency.p50),
      ms(latency.p99),
      (scripts / pairs).toFixed(2),
      (commands / pairs).toFixed(1),
      cpuPerPair(runs, 'clientCpu'),
      cpuPerPair(runs, 'serverCpu'),
      String(runs.reduce((sum, r) => sum + r.errors, 0)),
    ]);
  }

  const lines = [
    markdownTable(
      [
        'variant',
        'pairs/s',
        'vs raw (auto-pipelined)',
        'pair p50',
        'pair p99',
        'scripts/pair',
        'server cmds/pair',
        'client CPU/pair',
        'redis CPU/pair',
        'errors',
      ],
      rows,
      'lrrrrrrrrr',
    ),
    '',
    `${CONCURRENCY} concurrent loops, ${ctx.warmupMs} ms warm-up then ${ctx.durationMs} ms measured per variant` +
      `${ctx.rounds > 1 ? `, median of ${ctx.rounds} interleaved rounds` : ''}. ` +
      'A pair is one acquire + one release. "server cmds/pair" counts every command the server ran, ' +
      'including those inside scripts. CPU/pair is CPU time over the measured window divided by its pairs ' +
      '(client: this process; redis: redis-server). With the loops in lockstep on one pipelined connection, client and ' +
      'server mostly take turns, so pairs/s ≈ 1 / (client + redis CPU per pair) until a core saturates. ' +
      'Here raw is the auto-pipelined variant; the headline ratio, against raw on a connection without auto-pipelining ' +
      "(as users write it), is the peer comparison's S1 (`npm run bench -- peers-s1`).",
  ];
  for (const [name, reason] of skipped) lines.push('', `Skipped "${name}": ${reason}`);
  return lines.join('\n');
}
