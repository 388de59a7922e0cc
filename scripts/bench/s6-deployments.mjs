// @ts-check
/**
 * S6 — the plain lock on a Redis Cluster beside a single server: S1's and S2's
 * workloads on each, interleaved round by round in fresh processes.
 *
 *   standalone  the bench's own server (ctx.url), as in S1 and S2
 *   cluster     a RedisCluster of 3 masters + 3 replicas started here
 *               (redis-cli --cluster create), pinned like the main server;
 *               rlock reaches it with `createClient({ redis: { cluster: urls } })`
 *
 * S1: one process, 64 tasks, task i loops lock(key i) + unlock; pairs/s and
 * the worker's client CPU per pair. On the Cluster the 64 names spread over
 * the 3 masters (one connection each). S2: 4 processes × 8 tasks on one name;
 * the critical section checks exclusion on the standalone server in both
 * variants (`SET inside 1 NX` must be OK, `DEL inside`), so only the lock's
 * own path differs. Reported: acquisitions/s, wait p50/p99/max, violations,
 * failures.
 */
import { Redis } from 'ioredis';
import { createClient } from '@org/rlock';
import { RedisCluster } from '@org/rlock-testing';
import { runWorkers, settledBy } from './peers/workers.mjs';
import { pinUrls } from './servers.mjs';
import { median, percentile } from './stats.mjs';
import { markdownTable, ms, num } from './table.mjs';

export const id = 's6';
export const title = 's6 (rlock only) — deployments: the plain lock on a Redis Cluster (3 masters + 3 replicas) beside one server, S1 and S2';

const S1_TASKS = Number(process.env.BENCH_S1_CONCURRENCY ?? 64);
const S2_PROCESSES = Number(process.env.BENCH_S2_PROCESSES ?? 4);
const S2_TASKS = Number(process.env.BENCH_S2_TASKS ?? 8);
const LEASE_MS = 10_000;
/** After the window, how long calls get to finish before the worker reports them as still waiting. */
const DRAIN_MS = 5_000;
const TARGETS = /** @type {const} */ (['standalone', 'cluster']);

/**
 * @typedef {object} JobConfig
 * @property {'s1' | 's2'} workload
 * @property {unknown} redis what createClient takes as `redis`
 * @property {string} guardUrl the standalone server, where S2's critical section checks exclusion
 * @property {string} keyPrefix
 * @property {number} tasks
 * @property {number} warmupMs
 * @property {number} durationMs
 */

/**
 * @typedef {object} WorkerReport
 * @property {number} acquisitions inside the window
 * @property {number[]} waitsMs of lock() calls started in the window (S2)
 * @property {number} cpuUs the worker's CPU time over the window
 * @property {number} violations
 * @property {number} failures
 * @property {number} stillWaiting
 * @property {string} [firstError]
 */

/**
 * Worker side: one process of one target, one workload, one round.
 * @param {JobConfig} config @param {number} _index @param {() => Promise<unknown>} ready
 * @returns {Promise<WorkerReport>}
 */
export async function job(config, _index, ready) {
  const client = createClient({ redis: /** @type {any} */ (config.redis), keyPrefix: `${config.keyPrefix}-lib` });
  const guard = config.workload === 's2' ? new Redis(config.guardUrl) : undefined;
  const insideKey = `${config.keyPrefix}:inside`;
  const nameOf = (/** @type {number} */ task) => (config.workload === 's1' ? `s1:${task}` : 's2:hot');
  // Connect, route and load scripts before the clock starts.
  await client.task(async () => {
    for (let task = 0; task < Math.min(config.tasks, 8); task++) {
      const lock = client.getLock(nameOf(task));
      await lock.lock({ leaseMs: LEASE_MS });
      await lock.unlock();
    }
  });
  await guard?.ping();
  await ready();

  const windowStart = performance.now() + config.warmupMs;
  const end = windowStart + config.durationMs;
  /** @type {number[]} */
  const waitsMs = [];
  let acquisitions = 0;
  let violations = 0;
  let failures = 0;
  /** @type {string | undefined} */
  let firstError;
  /** @type {NodeJS.CpuUsage | undefined} */
  let cpuAtStart;
  let cpuUs = 0;
  const waiting = new Array(config.tasks).fill(false);
  const fail = (/** @type {unknown} */ error) => {
    failures++;
    firstError ??= error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  };
  const cpuTimer = setTimeout(() => (cpuAtStart = process.cpuUsage()), config.warmupMs);
  const cpuEnd = setTimeout(() => {
    const used = process.cpuUsage(cpuAtStart);
    cpuUs = used.user + used.system;
  }, config.warmupMs + config.durationMs);

  const loops = Array.from({ length: config.tasks }, (_, task) =>
    client.task(async () => {
      const lock = client.getLock(nameOf(task));
      for (let t0 = performance.now(); t0 < end && failures < 10_000; t0 = performance.now()) {
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
        if (guard && t0 >= windowStart) waitsMs.push(t1 - t0);
        if (t1 >= windowStart && t1 <= end) acquisitions++;
        if (guard) {
          try {
            if ((await guard.set(insideKey, '1', 'NX')) !== 'OK') violations++;
            await guard.del(insideKey);
          } catch (error) {
            fail(error);
          }
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
  clearTimeout(cpuTimer);
  clearTimeout(cpuEnd);
  const stillWaiting = drained ? 0 : waiting.filter(Boolean).length;
  if (drained) await client.close();
  guard?.disconnect();
  return { acquisitions, waitsMs, cpuUs, violations, failures, stillWaiting, firstError };
}

/** @param {import('./run.mjs').BenchContext} ctx */
export async function run(ctx) {
  // Two targets compared: at least 3 interleaved rounds, whatever the rlock-only default.
  const rounds = Math.max(3, ctx.rounds);
  ctx.log('s6: starting a Redis Cluster (3 masters + 3 replicas)');
  const cluster = await RedisCluster.start({ masters: 3, replicasPerMaster: 1 });
  try {
    const clusterUrls = cluster.nodes().map((node) => `redis://${node.host}:${node.port}`);
    await pinUrls(clusterUrls);
    /** @type {Record<string, unknown>} */
    const redisOf = { standalone: ctx.url, cluster: { cluster: clusterUrls.slice(0, 3) } };
    /** @type {Record<string, Record<string, number>[]>} */
    const figures = { 's1 standalone': [], 's1 cluster': [], 's2 standalone': [], 's2 cluster': [] };
    /** @type {string[]} */
    const errors = [];
    for (let round = 0; round < rounds; round++) {
      for (const workload of /** @type {const} */ (['s1', 's2'])) {
        for (const target of round % 2 === 0 ? TARGETS : [...TARGETS].reverse()) {
          ctx.log(`s6: round ${round + 1}/${rounds}, ${workload} on ${target}`);
          const processes = workload === 's1' ? 1 : S2_PROCESSES;
          /** @type {WorkerReport[]} */
          const reports = await runWorkers({
            count: processes,
            module: import.meta.url,
            fn: 'job',
            timeoutMs: 60_000 + ctx.warmupMs + ctx.durationMs + DRAIN_MS,
            config: /** @type {JobConfig} */ ({
              workload,
              redis: redisOf[target],
              guardUrl: ctx.url,
              keyPrefix: `${ctx.keyPrefix}:s6:${workload}:${target}:r${round}`,
              tasks: workload === 's1' ? S1_TASKS : S2_TASKS,
              warmupMs: ctx.warmupMs,
              durationMs: ctx.durationMs,
            }),
          });
          const acquisitions = reports.reduce((sum, r) => sum + r.acquisitions, 0);
          const waits = Float64Array.from(reports.flatMap((r) => r.waitsMs)).sort();
          figures[`${workload} ${target}`]?.push({
            rate: acquisitions / (ctx.durationMs / 1000),
            cpuPerPair: reports.reduce((sum, r) => sum + r.cpuUs, 0) / Math.max(1, acquisitions),
            p50: percentile(waits, 50),
            p99: percentile(waits, 99),
            max: waits.length ? Number(waits[waits.length - 1]) : Number.NaN,
            violations: reports.reduce((sum, r) => sum + r.violations, 0),
            failures: reports.reduce((sum, r) => sum + r.failures, 0),
            stillWaiting: reports.reduce((sum, r) => sum + r.stillWaiting, 0),
          });
          const firstError = reports.find((r) => r.firstError)?.firstError;
          if (firstError) errors.push(`${workload} on ${target}, round ${round + 1}: ${firstError}`);
        }
      }
    }
    /** @param {string} row @param {string} key */
    const med = (row, key) => median((figures[row] ?? []).map((f) => Number(f[key])));
    /** @param {string} row @param {string} key */
    const min = (row, key) => Math.min(...(figures[row] ?? []).map((f) => Number(f[key])));
    /** @param {string} row @param {string} key */
    const max = (row, key) => Math.max(...(figures[row] ?? []).map((f) => Number(f[key])));
    /** @param {string} row @param {string} key */
    const sum = (row, key) => (figures[row] ?? []).reduce((total, f) => total + Number(f[key]), 0);
    const s1 = markdownTable(
      ['S1: 64 tasks, 64 names', 'pairs/s (median)', 'min – max', '× standalone', 'client CPU/pair', 'failures'],
      TARGETS.map((target) => {
        const row = `s1 ${target}`;
        return [
          target === 'cluster' ? 'Cluster, 3 masters + 3 replicas' : 'one server',
          num(med(row, 'rate')),
          `${num(min(row, 'rate'))} – ${num(max(row, 'rate'))}`,
          `${(med(row, 'rate') / med('s1 standalone', 'rate')).toFixed(2)}×`,
          `${med(row, 'cpuPerPair').toFixed(1)} µs`,
          num(sum(row, 'failures')),
        ];
      }),
      'lrrrrr',
    );
    const s2 = markdownTable(
      [
        'S2: 4 processes × 8 tasks, one name',
        'acquisitions/s (median)',
        'min – max',
        '× standalone',
        'wait p50',
        'wait p99',
        'wait max',
        'violations',
        'still waiting',
        'failures',
      ],
      TARGETS.map((target) => {
        const row = `s2 ${target}`;
        return [
          target === 'cluster' ? 'Cluster, 3 masters + 3 replicas' : 'one server',
          num(med(row, 'rate')),
          `${num(min(row, 'rate'))} – ${num(max(row, 'rate'))}`,
          `${(med(row, 'rate') / med('s2 standalone', 'rate')).toFixed(2)}×`,
          ms(med(row, 'p50')),
          ms(med(row, 'p99')),
          ms(med(row, 'max')),
          num(sum(row, 'violations')),
          num(sum(row, 'stillWaiting')),
          num(sum(row, 'failures')),
        ];
      }),
      'lrrrrrrrrr',
    );
    const lines = [
      s1,
      '',
      s2,
      '',
      `Lease ${LEASE_MS} ms; medians of ${rounds} rounds, targets interleaved (${ctx.warmupMs} ms warm-up, ${ctx.durationMs} ms measured each), fresh processes per run. ` +
        `The Cluster's six servers and the single server share one core, the clients the other. S2's critical section checks exclusion on the single server in both rows; ` +
        `violations, still-waiting calls and failures are summed over rounds.`,
    ];
    if (errors.length) lines.push('', `Failures: ${errors.join('; ')}`);
    return lines.join('\n');
  } finally {
    await cluster.stop();
  }
}
