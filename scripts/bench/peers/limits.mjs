// @ts-check
/**
 * Limits of the machine, measured in the same sitting: the `PING` round trip
 * on loopback (one task, sequential) and the throughput of the `EVALSHA`
 * compare-and-delete with 64 concurrent tasks, the ceiling any script-based
 * lock meets here (a lock + unlock pair costs at least one such script call
 * plus the acquire).
 */
import { Redis } from 'ioredis';
import { snapshot, usageBetween } from '../server-stats.mjs';
import { median, summarize } from '../stats.mjs';
import { markdownTable, ms, num } from '../table.mjs';
import { COMPARE_AND_DELETE } from './libraries.mjs';
import { describeError, runWorkers } from './workers.mjs';

export const id = 'peers-limits';
export const title = 'Limits — PING round trip and EVALSHA compare-and-delete throughput';

const CONCURRENCY = Number(process.env.BENCH_S1_CONCURRENCY ?? 64);

/**
 * @typedef {object} JobConfig
 * @property {'ping' | 'evalsha' | 'evalsha-ap'} measure
 * @property {string} url
 * @property {string} keyPrefix
 * @property {number} warmupMs
 * @property {number} durationMs
 */

/**
 * Worker side.
 * @param {JobConfig} config @param {number} _index @param {() => Promise<unknown>} ready
 */
export async function job(config, _index, ready) {
  const redis = new Redis(config.url, { enableAutoPipelining: config.measure === 'evalsha-ap' });
  const observer = new Redis(config.url);
  const sha = /** @type {string} */ (await redis.script('LOAD', COMPARE_AND_DELETE));
  const keys = Array.from({ length: CONCURRENCY }, (_, i) => `${config.keyPrefix}:${i}`);
  // The keys hold another token, so every call reads the key, compares and returns 0.
  for (const key of keys) await redis.set(key, 'held-by-someone-else', 'PX', 60_000);
  await ready();
  const windowStart = performance.now() + config.warmupMs;
  const end = windowStart + config.durationMs;
  const before = new Promise((resolve) => setTimeout(() => resolve(snapshot(observer)), config.warmupMs));
  const after = new Promise((resolve) => setTimeout(() => resolve(snapshot(observer)), config.warmupMs + config.durationMs));
  /** @type {number[]} */
  const samples = [];
  let calls = 0;
  if (config.measure === 'ping') {
    for (let t0 = performance.now(); t0 < end; t0 = performance.now()) {
      await redis.ping();
      const t1 = performance.now();
      if (t0 >= windowStart && t1 <= end) samples.push(t1 - t0);
    }
  } else {
    await Promise.all(
      keys.map(async (key) => {
        for (let t0 = performance.now(); t0 < end; t0 = performance.now()) {
          await redis.evalsha(sha, 1, key, 'my-token');
          if (t0 >= windowStart && performance.now() <= end) calls++;
        }
      }),
    );
  }
  const usage = usageBetween(await before, await after);
  await redis.quit();
  await observer.quit();
  const latency = summarize(samples);
  const count = config.measure === 'ping' ? samples.length : calls;
  return {
    p50: latency.p50,
    p99: latency.p99,
    rate: count / (config.durationMs / 1000),
    redisUs: (usage.serverCpu * usage.elapsedMs * 1000) / (count || 1),
    clientUs: (usage.clientCpu * usage.elapsedMs * 1000) / (count || 1),
  };
}

/** @param {import('../run.mjs').BenchContext} ctx */
export async function run(ctx) {
  /** @type {Array<{ measure: JobConfig['measure'], label: string }>} */
  const measures = [
    { measure: 'ping', label: 'PING round trip, 1 task, sequential' },
    { measure: 'evalsha', label: `EVALSHA compare-and-delete, ${CONCURRENCY} tasks, one connection, no auto-pipelining` },
    { measure: 'evalsha-ap', label: `EVALSHA compare-and-delete, ${CONCURRENCY} tasks, one auto-pipelined connection` },
  ];
  /** @type {Map<string, any[]>} */
  const results = new Map();
  /** @type {Map<string, string>} */
  const failed = new Map();
  for (let round = 1; round <= ctx.rounds; round++) {
    for (const { measure } of measures) {
      if (failed.has(measure)) continue;
      ctx.log(`${id}: ${measure} (round ${round}/${ctx.rounds})`);
      try {
        const [figures] = await runWorkers({
          count: 1,
          module: import.meta.url,
          fn: 'job',
          timeoutMs: 60_000 + ctx.warmupMs + ctx.durationMs,
          config: /** @type {JobConfig} */ ({
            measure,
            url: ctx.url,
            keyPrefix: `${ctx.keyPrefix}:lim:${measure}:r${round}`,
            warmupMs: ctx.warmupMs,
            durationMs: ctx.durationMs,
          }),
        });
        results.set(measure, [...(results.get(measure) ?? []), figures]);
      } catch (error) {
        failed.set(measure, describeError(error));
      }
    }
  }
  const rows = measures.map(({ measure, label }) => {
    const runs = results.get(measure);
    if (!runs) return [label, `could not run: ${failed.get(measure) ?? '?'}`, '', '', '', ''];
    /** @param {string} key */
    const values = (key) => runs.map((r) => Number(r[key]));
    if (measure === 'ping') {
      const p50 = values('p50');
      return [
        label,
        `p50 ${ms(median(p50))}`,
        `${ms(Math.min(...p50))} – ${ms(Math.max(...p50))}`,
        `p99 ${ms(median(values('p99')))}`,
        `${num(median(values('rate')))} round trips/s`,
        `${num(median(values('redisUs')), 1)} µs`,
      ];
    }
    const rate = values('rate');
    return [label, `${num(median(rate))} calls/s`, `${num(Math.min(...rate))} – ${num(Math.max(...rate))}`, '', '', `${num(median(values('redisUs')), 1)} µs`];
  });
  return [
    markdownTable(['measure', 'figure (median)', 'min – max', 'latency', 'rate', 'redis CPU/call'], rows, 'lrrrrr'),
    '',
    `${ctx.warmupMs} ms warm-up then ${ctx.durationMs} ms measured, each in a fresh worker process; ${ctx.rounds} round(s), interleaved. ` +
      'The compare-and-delete is the script every single-server lock here runs to release ' +
      "(`if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('del',KEYS[1]) end return 0`), on keys that hold another token, " +
      'so each call reads, compares and returns 0. A lock + unlock pair needs at least this call plus the acquire (two server ' +
      "round trips), so S1's pairs/s on one connection without auto-pipelining stay under about half the first rate.",
  ].join('\n');
}
