// @ts-check
/**
 * S2 — contention on one key. PROCESSES (4) processes × TASKS (8) tasks loop on
 * the SAME lock: `lock.lock({ leaseMs })`, an empty critical section,
 * `lock.unlock()`, for the measured duration after a warm-up. Measures
 * acquisitions/s across all processes, the wait of each `lock()` call (time from
 * calling it to holding the lock: this is where pub/sub wake-up shows), and how
 * the acquisitions spread over processes and tasks (rlock's lock is not fair,
 * like Redisson's RLock, so this shows how unfair).
 *
 * The same file is the child process: run.mjs imports `run`, which forks this
 * file with the argument `child`. Children report their samples over IPC.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createClient } from '@org/rlock';
import { summarize } from './stats.mjs';
import { markdownTable, ms, num, pct } from './table.mjs';

export const id = 's2';
export const title = 's2 (rlock only) — contention: 4 processes × 8 tasks on ONE key, per-process detail';

const PROCESSES = Number(process.env.BENCH_S2_PROCESSES ?? 4);
const TASKS = Number(process.env.BENCH_S2_TASKS ?? 8);
const LEASE_MS = 10_000;
/** A wait longer than the run plus this is a hang, not a sample: it is aborted and reported. */
const STUCK_GRACE_MS = 30_000;

/**
 * @typedef {object} ChildConfig
 * @property {string} url
 * @property {string} keyPrefix
 * @property {number} tasks
 * @property {number} warmupMs
 * @property {number} durationMs
 */

/**
 * @typedef {object} ChildReport
 * @property {number} index
 * @property {number} acquisitions acquired inside the measured window
 * @property {number[]} waitsMs wait of each lock() call started inside the window
 * @property {number[]} perTask acquisitions inside the window, per task
 * @property {number} failures lock() or unlock() calls that threw (e.g. stuck waits aborted)
 * @property {string} [firstError]
 */

// ---------------------------------------------------------------------------
// child side

/** @param {ChildConfig} config @param {number} index @returns {Promise<ChildReport>} */
async function childMain(config, index) {
  const client = createClient({ redis: config.url, keyPrefix: config.keyPrefix });
  const lock = client.getLock('s2:hot');
  /** @type {number[]} */
  const waitsMs = [];
  const perTask = new Array(config.tasks).fill(0);
  let failures = 0;
  /** @type {string | undefined} */
  let firstError;

  // Connect and load scripts before the clock starts.
  await client.task(async () => {
    await lock.lock({ leaseMs: LEASE_MS });
    await lock.unlock();
  });
  process.send?.({ type: 'ready' });
  await new Promise((resolve) => process.once('message', resolve));

  const windowStart = performance.now() + config.warmupMs;
  const end = windowStart + config.durationMs;
  const hardStop = AbortSignal.timeout(config.warmupMs + config.durationMs + STUCK_GRACE_MS);

  /** @param {number} task */
  const loop = (task) =>
    client.task(async () => {
      for (let t0 = performance.now(); t0 < end && !hardStop.aborted; t0 = performance.now()) {
        try {
          await lock.lock({ leaseMs: LEASE_MS, signal: hardStop });
        } catch (error) {
          failures++;
          firstError ??= error instanceof Error ? `${error.name}: ${error.message}` : String(error);
          continue;
        }
        const t1 = performance.now();
        if (t0 >= windowStart) waitsMs.push(t1 - t0);
        if (t1 >= windowStart && t1 <= end) perTask[task]++;
        try {
          await lock.unlock();
        } catch (error) {
          failures++;
          firstError ??= error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        }
      }
    });
  await Promise.all(Array.from({ length: config.tasks }, (_, task) => loop(task)));
  await client.close();
  return { index, acquisitions: perTask.reduce((a, b) => a + b, 0), waitsMs, perTask, failures, firstError };
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'child') {
  process.on('disconnect', () => process.exit(2)); // parent gone
  const config = /** @type {ChildConfig} */ (JSON.parse(/** @type {string} */ (process.env.RLOCK_BENCH_S2)));
  const report = await childMain(config, Number(process.argv[3]));
  process.removeAllListeners('disconnect');
  process.send?.({ type: 'report', report }, () => process.disconnect());
}

// ---------------------------------------------------------------------------
// parent side

/**
 * @param {import('./run.mjs').BenchContext} ctx
 * @returns {Promise<string>} the section's Markdown
 */
export async function run(ctx) {
  /** @type {ChildConfig} */
  const config = {
    url: ctx.url,
    keyPrefix: `${ctx.keyPrefix}-s2`,
    tasks: TASKS,
    warmupMs: ctx.warmupMs,
    durationMs: ctx.durationMs,
  };
  ctx.log(`s2: ${PROCESSES} processes × ${TASKS} tasks on one key`);
  const children = Array.from({ length: PROCESSES }, (_, index) =>
    fork(fileURLToPath(import.meta.url), ['child', String(index)], {
      env: { ...process.env, RLOCK_BENCH_S2: JSON.stringify(config) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const limitMs = 30_000 + ctx.warmupMs + ctx.durationMs + STUCK_GRACE_MS;
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  /** @type {ChildReport[]} */
  let reports;
  try {
    let ready = 0;
    reports = await Promise.race([
      Promise.all(
        children.map(
          (child, index) =>
            /** @type {Promise<ChildReport>} */ (
              new Promise((resolve, reject) => {
                /** @type {ChildReport | undefined} */
                let report;
                child.on('message', (/** @type {any} */ message) => {
                  if (message?.type === 'ready' && ++ready === PROCESSES) for (const c of children) c.send({ type: 'start' });
                  if (message?.type === 'report') report = message.report;
                });
                child.on('close', (code, signal) =>
                  report && code === 0 ? resolve(report) : reject(new Error(`s2 child ${index} exited with ${signal ?? `code ${code}`}`)),
                );
              })
            ),
        ),
      ),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`s2 children did not finish within ${limitMs} ms`)), limitMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  reports.sort((a, b) => a.index - b.index);

  const total = reports.reduce((sum, r) => sum + r.acquisitions, 0);
  const waits = summarize(reports.flatMap((r) => r.waitsMs));
  const perTask = reports.flatMap((r) => r.perTask);
  const failures = reports.reduce((sum, r) => sum + r.failures, 0);
  const overall = markdownTable(
    ['acquisitions/s', 'wait p50', 'wait p90', 'wait p99', 'wait max', 'wait mean', 'waits sampled', 'failures'],
    [[num(total / (ctx.durationMs / 1000)), ms(waits.p50), ms(waits.p90), ms(waits.p99), ms(waits.max), ms(waits.mean), num(waits.count), String(failures)]],
    'rrrrrrrr',
  );
  const fairness = markdownTable(
    ['process', 'acquisitions', 'share', 'wait p50', 'wait p99', 'wait max', 'per task min–max'],
    reports.map((r) => {
      const s = summarize(r.waitsMs);
      return [
        String(r.index),
        num(r.acquisitions),
        pct(r.acquisitions / (total || 1)),
        ms(s.p50),
        ms(s.p99),
        ms(s.max),
        `${Math.min(...r.perTask)}–${Math.max(...r.perTask)}`,
      ];
    }),
    'rrrrrrr',
  );
  const lines = [
    overall,
    '',
    `${PROCESSES} processes × ${TASKS} tasks, lock({ leaseMs: ${LEASE_MS} }) + empty critical section + unlock(), ` +
      `${ctx.warmupMs} ms warm-up then ${ctx.durationMs} ms measured. Wait = lock() call to acquired. ` +
      `Target: max wait < 100 ms (${waits.max < 100 ? 'met' : 'not met'} in this run). ` +
      `Fair share would be ${pct(1 / PROCESSES)} per process; tasks with fewest/most acquisitions: ` +
      `${Math.min(...perTask)}/${Math.max(...perTask)}. ` +
      `By Little's law, with nearly all ${PROCESSES * TASKS} tasks waiting at any time (the critical section is empty) the mean wait is about ` +
      `${PROCESSES * TASKS} / acquisitions per second = ${ms((PROCESSES * TASKS * ctx.durationMs) / Math.max(1, total))}` +
      ` (one hand-off every ${ms(ctx.durationMs / Math.max(1, total))}); a lock without FIFO order has a max wait several times its mean.`,
    '',
    fairness,
  ];
  const firstError = reports.find((r) => r.firstError)?.firstError;
  if (firstError) lines.push('', `First failure: ${firstError}`);
  return lines.join('\n');
}
