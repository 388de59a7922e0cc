// @ts-check
/**
 * S3 — what the watchdog costs per renewal tick. For each hold count N (1, 100,
 * 10,000 by default) one client with a short `watchdogTimeoutMs` (3,000 ms, so a
 * renewal period of 1,000 ms) takes N locks with `lock.acquire()` (no `leaseMs`:
 * watchdog leases), lets them be renewed for a warm-up of at least one period,
 * then counts over a window of whole periods:
 *
 * - script calls on the server (`INFO commandstats`, evalsha + eval deltas; no
 *   acquire or release runs in the window, so every script call is a renewal),
 * - `lockRenewed` events (one per renewal script call, `count` holds each),
 * - bursts of renewal replies (events closer than a few ms together: one
 *   watchdog tick sends all its batches at once),
 * - client CPU (`process.cpuUsage`) and redis-server CPU (`INFO cpu`),
 *
 * and divides by the number of periods in the window. Then every hold is
 * released and the client closed. Prints numbers; never fails on a timing.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { createClient } from '@org/rlock';
import { median } from './stats.mjs';
import { markdownTable, ms, num } from './table.mjs';
import { snapshot, usageBetween } from './server-stats.mjs';

export const id = 's3';
export const title = 's3 (rlock only) — watchdog: script calls and CPU per renewal tick for 1, 100 and 10,000 held locks';

/** @param {string} name @param {number} fallback @param {number} min */
function intFromEnv(name, fallback, min) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min}, got ${raw}`);
  return value;
}

/** @returns {number[]} hold counts to measure */
function holdCountsFromEnv() {
  const raw = process.env.BENCH_S3_HOLDS;
  if (raw === undefined || raw === '') return [1, 100, 10_000];
  const counts = raw.split(',').map((part) => Number(part.trim()));
  if (counts.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`BENCH_S3_HOLDS must list positive integers, got ${raw}`);
  return counts;
}

/** Lease of every hold; the watchdog renews it every third. */
const WATCHDOG_TIMEOUT_MS = intFromEnv('BENCH_S3_WATCHDOG_MS', 3_000, 300);
const PERIOD_MS = WATCHDOG_TIMEOUT_MS / 3;
/** Acquisitions (and releases) in flight at once while setting up N holds. */
const CHUNK = intFromEnv('BENCH_S3_CHUNK', 500, 1);
/**
 * Replies closer together than this belong to one burst. A watchdog tick sends
 * every batch due within its coalescing window (≤ 100 ms) at once, so two ticks
 * are normally more than this apart.
 */
const BURST_GAP_MS = Math.min(50, PERIOD_MS / 20);

/**
 * @typedef {object} RunResult One measurement of N holds.
 * @property {number} holds
 * @property {number} acquireMs time to take all N holds (their renewals are spread over this)
 * @property {number} periods renewal periods in the measured window
 * @property {number} scriptCalls evalsha + eval on the server in the window
 * @property {number} events lockRenewed events in the window
 * @property {number} renewedHolds sum of their counts
 * @property {number} maxBatch largest count of one event
 * @property {number} bursts groups of replies closer than BURST_GAP_MS
 * @property {number} lost lockLost events (should be 0)
 * @property {number} errors client `error` events (renewals retried, should be 0)
 * @property {number} releaseFailures holds whose release did not succeed (should be 0)
 * @property {number} clientCpuMs CPU time of this process in the window
 * @property {import('./server-stats.mjs').Usage} usage server side, between the snapshots around the window
 */

/**
 * Runs `fn` over `items`, at most `limit` at a time.
 * @template T, R
 * @param {readonly T[]} items
 * @param {number} limit
 * @param {(item: T, index: number) => Promise<R>} fn
 * @returns {Promise<PromiseSettledResult<R>[]>}
 */
async function inChunks(items, limit, fn) {
  /** @type {PromiseSettledResult<R>[]} */
  const results = [];
  for (let start = 0; start < items.length; start += limit) {
    const chunk = items.slice(start, start + limit);
    results.push(...(await Promise.allSettled(chunk.map((item, i) => fn(item, start + i)))));
  }
  return results;
}

/**
 * @param {import('./run.mjs').BenchContext} ctx
 * @param {Redis} observer a separate connection for INFO snapshots
 * @param {number} holds
 * @param {number} round
 * @returns {Promise<RunResult>}
 */
async function measure(ctx, observer, holds, round) {
  const client = createClient({ redis: ctx.url, keyPrefix: `${ctx.keyPrefix}-s3`, watchdogTimeoutMs: WATCHDOG_TIMEOUT_MS });
  let counting = false;
  let events = 0;
  let renewedHolds = 0;
  let maxBatch = 0;
  let bursts = 0;
  let lastEventAt = Number.NEGATIVE_INFINITY;
  let lost = 0;
  let errors = 0;
  client.on('lockRenewed', ({ count }) => {
    if (!counting) return;
    const now = performance.now();
    if (now - lastEventAt > BURST_GAP_MS) bursts++;
    lastEventAt = now;
    events++;
    renewedHolds += count;
    if (count > maxBatch) maxBatch = count;
  });
  client.on('lockLost', () => void lost++);
  client.on('error', () => void errors++);

  /** @type {import('@org/rlock').LockHandle[]} */
  const handles = [];
  try {
    const names = Array.from({ length: holds }, (_, i) => `s3:${holds}:${round}:${i}`);
    const acquireStart = performance.now();
    const acquired = await inChunks(names, CHUNK, (name) => client.getLock(name).acquire({ waitMs: 0 }));
    const acquireMs = performance.now() - acquireStart;
    for (const outcome of acquired) if (outcome.status === 'fulfilled') handles.push(outcome.value);
    const failed = acquired.find((outcome) => outcome.status === 'rejected');
    if (failed) throw new Error(`${holds - handles.length} of ${holds} acquisitions failed: ${String(failed.reason)}`);

    // Warm-up: at least one full period, so every hold has been renewed once and
    // holds taken close together have settled into shared ticks.
    await sleep(Math.max(ctx.warmupMs, PERIOD_MS + 100));

    // A window of whole periods, so every group of holds falls due the same number of times.
    const periods = Math.max(2, Math.round(ctx.durationMs / PERIOD_MS));
    const before = await snapshot(observer);
    // Client CPU is read around the window itself, so the snapshots' own INFO parsing is left out.
    const cpuStart = process.cpuUsage();
    counting = true;
    await sleep(periods * PERIOD_MS);
    counting = false;
    const clientCpu = process.cpuUsage(cpuStart);
    const clientCpuMs = (clientCpu.user + clientCpu.system) / 1000;
    const after = await snapshot(observer);
    const usage = usageBetween(before, after);
    const scriptCalls = Object.entries(usage.calls).reduce((sum, [name, calls]) => (/^eval/.test(name) ? sum + calls : sum), 0);

    const released = await inChunks(handles, CHUNK, (handle) => handle.unlock());
    const releaseFailures = released.filter((outcome) => outcome.status === 'rejected').length;
    handles.length = 0;
    return {
      holds,
      acquireMs,
      periods,
      scriptCalls,
      events,
      renewedHolds,
      maxBatch,
      bursts,
      lost,
      errors,
      releaseFailures,
      clientCpuMs,
      usage,
    };
  } finally {
    // On a failure above, release what is still held (best effort) before closing.
    if (handles.length > 0) await inChunks(handles, CHUNK, (handle) => handle.unlock());
    await client.close();
  }
}

/**
 * @param {import('./run.mjs').BenchContext} ctx
 * @returns {Promise<string>} the section's Markdown
 */
export async function run(ctx) {
  const counts = holdCountsFromEnv();
  const observer = new Redis(ctx.url);
  /** @type {Map<number, RunResult[]>} */
  const results = new Map();
  try {
    for (let round = 1; round <= ctx.rounds; round++) {
      for (const holds of counts) {
        ctx.log(`s3: ${num(holds)} holds${ctx.rounds > 1 ? ` (round ${round}/${ctx.rounds})` : ''}`);
        const result = await measure(ctx, observer, holds, round);
        results.set(holds, [...(results.get(holds) ?? []), result]);
      }
    }
  } finally {
    await observer.quit();
  }

  /**
   * Median over rounds of a per-period figure.
   * @param {RunResult[]} runs @param {(r: RunResult) => number} value
   */
  const perPeriod = (runs, value) => median(runs.map((r) => value(r) / r.periods));
  const rows = counts.map((holds) => {
    const runs = /** @type {RunResult[]} */ (results.get(holds));
    const calls = perPeriod(runs, (r) => r.scriptCalls);
    const renewed = perPeriod(runs, (r) => r.renewedHolds);
    const clientCpuMs = perPeriod(runs, (r) => r.clientCpuMs);
    const redisCpuMs = perPeriod(runs, (r) => r.usage.serverCpu * r.usage.elapsedMs);
    return [
      num(holds),
      ms(median(runs.map((r) => r.acquireMs))),
      num(calls, 1),
      num(Math.ceil(holds / 100)),
      num(
        perPeriod(runs, (r) => r.events),
        1,
      ),
      num(renewed, 0),
      num(median(runs.map((r) => (r.events ? r.renewedHolds / r.events : Number.NaN))), 1),
      num(Math.max(...runs.map((r) => r.maxBatch))),
      num(
        perPeriod(runs, (r) => r.bursts),
        1,
      ),
      ms(clientCpuMs),
      `${num(renewed ? (clientCpuMs * 1000) / renewed : Number.NaN, 1)} µs`,
      ms(redisCpuMs),
      `${runs.reduce((s, r) => s + r.lost, 0)} / ${runs.reduce((s, r) => s + r.errors, 0)} / ${runs.reduce((s, r) => s + r.releaseFailures, 0)}`,
    ];
  });

  const periods = [...results.values()].flat()[0]?.periods ?? 0;
  return [
    markdownTable(
      [
        'holds',
        'acquire all',
        'script calls/tick',
        '⌈N/100⌉',
        'lockRenewed/tick',
        'holds renewed/tick',
        'holds/call',
        'max batch',
        'bursts/tick',
        'client CPU/tick',
        'client CPU/hold',
        'redis CPU/tick',
        'lost / errors / release failures',
      ],
      rows,
      'rrrrrrrrrrrrr',
    ),
    '',
    `watchdogTimeoutMs ${num(WATCHDOG_TIMEOUT_MS)} → a renewal period ("tick" here) of ${num(PERIOD_MS)} ms. ` +
      `Holds taken with \`lock.acquire()\` (no \`leaseMs\`), ${CHUNK} at a time; then a warm-up of ` +
      `${num(Math.max(ctx.warmupMs, PERIOD_MS + 100))} ms (at least one period), then ${periods} periods measured` +
      `${ctx.rounds > 1 ? `, median of ${ctx.rounds} interleaved rounds` : ''}; every figure "/tick" is the window's total ` +
      'divided by its periods. "script calls" are evalsha + eval on the server (only renewals run in the window); each ' +
      '`lockRenewed` event is one renewal call, `count` holds. "bursts" are groups of replies less than ' +
      `${num(BURST_GAP_MS)} ms apart: timer ticks seen from outside. Holds fall due when they were taken, so when taking ` +
      'them all ("acquire all") spans a good part of a period, their renewals are spread over several ticks per period, each ' +
      '⌈holds due / 100⌉ calls: expect ⌈N/100⌉ calls, plus at most one per extra burst. CPU is per period (client: this ' +
      'process over the window, including the `lockRenewed` listener; redis: redis-server, including the two INFO snapshots ' +
      'and its own housekeeping) and per hold renewed; at 1 hold it is mostly that idle floor. Not a speed target: the ' +
      'point is that calls grow by N/100, not N.',
  ].join('\n');
}
