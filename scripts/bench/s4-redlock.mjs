// @ts-check
/**
 * S4 — Redlock over 5 independent masters (its own RedisFleet of 5).
 *
 * 1. Contention: PROCESSES (4) processes × TASKS (8) tasks loop on the SAME
 *    lock: `lock({ leaseMs })`, an empty critical section, `unlock()`, for the
 *    measured window after a warm-up. Acquisitions/s across all processes, the
 *    wait of each `lock()` call, the spread over processes, rounds sent per
 *    acquisition, and a check that no two holders overlapped (a counter in
 *    each child, and every child's critical section stamped in one shared
 *    Redis key). This is the workload where node-redlock's split votes leave
 *    partial grants until their TTL and throughput falls to 0/s.
 * 2. Uncontended latency: one task takes and releases its own key in a loop:
 *    `lock()` latency p50/p99 on Redlock (5 masters) next to the single-server
 *    client (`createClient`) on one of the same masters.
 * 3. Spread: 4 clients × 2 tasks on one name, each hold lasting 50 ms; 50 ms
 *    into each hold, how many masters have it (Redlock needs 3 of 5; the
 *    target is ≥ 4 of 5 for at least 97 % of holds).
 *
 * The same file is the child process: run.mjs imports `run`, which forks this
 * file with the argument `child`. Children report over IPC.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createClient, createRedlock } from '@org/rlock';
import { startFleet } from './servers.mjs';
import { summarize } from './stats.mjs';
import { markdownTable, ms, num, pct } from './table.mjs';

export const id = 's4';
export const title = 's4 (rlock only) — Redlock over 5 masters: 4 processes × 8 tasks on ONE key; uncontended latency vs a single master';

const MASTERS = Number(process.env.BENCH_S4_MASTERS ?? 5);
const PROCESSES = Number(process.env.BENCH_S4_PROCESSES ?? 4);
const TASKS = Number(process.env.BENCH_S4_TASKS ?? 8);
const LEASE_MS = 10_000;
/** A wait longer than the run plus this is a hang, not a sample: it is aborted and reported. */
const STUCK_GRACE_MS = 30_000;

/**
 * @typedef {object} ChildConfig
 * @property {string[]} masters
 * @property {string} keyPrefix
 * @property {number} tasks
 * @property {number} warmupMs
 * @property {number} durationMs
 */

/**
 * @typedef {object} ChildReport
 * @property {number} index
 * @property {number} acquisitions acquired inside the measured window
 * @property {number} allAcquisitions acquired during the whole run (warm-up included)
 * @property {number[]} waitsMs wait of each lock() call started inside the window
 * @property {number[]} perTask acquisitions inside the window, per task
 * @property {number} overlaps critical sections that found another holder inside
 * @property {number} failures lock() or unlock() calls that threw
 * @property {string} [firstError]
 */

// ---------------------------------------------------------------------------
// child side

/** @param {ChildConfig} config @param {number} index @returns {Promise<ChildReport>} */
async function childMain(config, index) {
  const redlock = createRedlock({ masters: config.masters, keyPrefix: config.keyPrefix });
  redlock.on('error', () => undefined);
  const lock = redlock.getLock('s4:hot');
  // Overlap check across processes: a holder marks the shared key on entry and
  // clears it on exit; finding it already marked means two holders at once.
  const marker = new Redis(config.masters[0] ?? '');
  const insideKey = `${config.keyPrefix}:bench:inside`;
  /** @type {number[]} */
  const waitsMs = [];
  const perTask = new Array(config.tasks).fill(0);
  let failures = 0;
  let overlaps = 0;
  let allAcquisitions = 0;
  /** @type {string | undefined} */
  let firstError;
  const fail = (/** @type {unknown} */ error) => {
    failures++;
    firstError ??= error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  };

  await redlock.task(async () => {
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
    redlock.task(async () => {
      for (let t0 = performance.now(); t0 < end && !hardStop.aborted; t0 = performance.now()) {
        try {
          await lock.lock({ leaseMs: LEASE_MS, signal: hardStop });
        } catch (error) {
          fail(error);
          continue;
        }
        const t1 = performance.now();
        allAcquisitions++;
        if (t0 >= windowStart) waitsMs.push(t1 - t0);
        if (t1 >= windowStart && t1 <= end) perTask[task]++;
        try {
          if ((await marker.set(insideKey, String(index), 'NX')) === null) overlaps++;
          await marker.del(insideKey);
        } catch (error) {
          fail(error);
        }
        try {
          await lock.unlock();
        } catch (error) {
          fail(error);
        }
      }
    });
  await Promise.all(Array.from({ length: config.tasks }, (_, task) => loop(task)));
  await redlock.close();
  await marker.quit();
  return { index, acquisitions: perTask.reduce((a, b) => a + b, 0), allAcquisitions, waitsMs, perTask, overlaps, failures, firstError };
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'child') {
  process.on('disconnect', () => process.exit(2)); // parent gone
  const config = /** @type {ChildConfig} */ (JSON.parse(/** @type {string} */ (process.env.RLOCK_BENCH_S4)));
  const report = await childMain(config, Number(process.argv[3]));
  process.removeAllListeners('disconnect');
  process.send?.({ type: 'report', report }, () => process.disconnect());
}

// ---------------------------------------------------------------------------
// parent side

/** Script calls (evalsha + eval) summed over the masters. @param {Redis[]} admins */
async function scriptCalls(admins) {
  let total = 0;
  for (const admin of admins) {
    const info = await admin.info('commandstats');
    for (const command of ['evalsha', 'eval']) {
      const match = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info);
      total += match ? Number(match[1]) : 0;
    }
  }
  return total;
}

/**
 * @param {ChildConfig} config
 * @param {(message: string) => void} log
 * @returns {Promise<ChildReport[]>}
 */
async function contention(config, log) {
  log(`s4: ${PROCESSES} processes × ${TASKS} tasks on one key over ${MASTERS} masters`);
  const children = Array.from({ length: PROCESSES }, (_, index) =>
    fork(fileURLToPath(import.meta.url), ['child', String(index)], {
      env: { ...process.env, RLOCK_BENCH_S4: JSON.stringify(config) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const limitMs = 30_000 + config.warmupMs + config.durationMs + STUCK_GRACE_MS;
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  try {
    let ready = 0;
    return await Promise.race([
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
                  report && code === 0 ? resolve(report) : reject(new Error(`s4 child ${index} exited with ${signal ?? `code ${code}`}`)),
                );
              })
            ),
        ),
      ),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`s4 children did not finish within ${limitMs} ms`)), limitMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/**
 * `lock()` latency of one task taking and releasing its own key in a loop.
 * @param {{ getLock(name: string): import('@org/rlock').RLock, task<T>(fn: () => Promise<T>): Promise<T> }} client
 * @param {number} warmupMs @param {number} durationMs
 */
async function uncontended(client, warmupMs, durationMs) {
  const lock = client.getLock('s4:solo');
  /** @type {number[]} */
  const samples = [];
  await client.task(async () => {
    const windowStart = performance.now() + warmupMs;
    const end = windowStart + durationMs;
    for (let t0 = performance.now(); t0 < end; t0 = performance.now()) {
      await lock.lock({ leaseMs: LEASE_MS });
      if (t0 >= windowStart) samples.push(performance.now() - t0);
      await lock.unlock();
    }
  });
  return summarize(samples);
}

/**
 * 4 clients × 2 tasks on one name; each hold lasts SPREAD_HOLD_MS, and 50 ms
 * into it the masters are read: on how many does the holder's key sit?
 * (The owner seen most often: a local hand-off keeps the first holder's owner.)
 * @param {string[]} masters @param {string} keyPrefix @param {number} durationMs
 * @returns {Promise<number[]>} masters holding it, one entry per hold
 */
async function spread(masters, keyPrefix, durationMs) {
  const clients = Array.from({ length: 4 }, () => createRedlock({ masters, keyPrefix }));
  const admins = masters.map((url) => new Redis(url));
  const key = `${keyPrefix}:{s4:spread}`;
  /** @type {number[]} */
  const counts = [];
  const end = performance.now() + durationMs;
  await Promise.all(
    clients.flatMap((client) =>
      [0, 1].map(() =>
        client.task(async () => {
          const lock = client.getLock('s4:spread');
          while (performance.now() < end) {
            await lock.lock({ leaseMs: LEASE_MS });
            await new Promise((resolve) => setTimeout(resolve, 50));
            // Each master's lease lock is one string `<owner>|<op>` (the Redlock README's data layout).
            const owners = await Promise.all(admins.map(async (admin) => (await admin.get(key))?.split('|')[0] ?? null));
            counts.push(Math.max(...owners.map((owner) => (owner === null ? 0 : owners.filter((other) => other === owner).length))));
            await lock.unlock();
          }
        }),
      ),
    ),
  );
  await Promise.all([...clients.map((client) => client.close()), ...admins.map((admin) => admin.quit())]);
  return counts;
}

/**
 * @param {import('./run.mjs').BenchContext} ctx
 * @returns {Promise<string>} the section's Markdown
 */
export async function run(ctx) {
  const fleet = await startFleet(MASTERS); // pinned to the server core, like the main server
  const admins = fleet.urls().map((url) => new Redis(url));
  try {
    const keyPrefix = `${ctx.keyPrefix}-s4`;
    const before = await scriptCalls(admins);
    const reports = (await contention({ masters: fleet.urls(), keyPrefix, tasks: TASKS, warmupMs: ctx.warmupMs, durationMs: ctx.durationMs }, ctx.log)).sort(
      (a, b) => a.index - b.index,
    );
    const scripts = (await scriptCalls(admins)) - before;
    const leftOver = (await Promise.all(admins.map((admin) => admin.exists(`${keyPrefix}:{s4:hot}`)))).reduce((a, b) => a + b, 0);

    ctx.log('s4: uncontended latency, Redlock then single master');
    const redlock = createRedlock({ masters: fleet.urls(), keyPrefix: `${keyPrefix}-solo` });
    const single = createClient({ redis: fleet.url(0), keyPrefix: `${keyPrefix}-solo1` });
    const latencyRedlock = await uncontended(redlock, ctx.warmupMs, Math.min(ctx.durationMs, 3_000));
    const latencySingle = await uncontended(single, ctx.warmupMs, Math.min(ctx.durationMs, 3_000));
    await redlock.close();
    await single.close();
    ctx.log('s4: spread of holds under contention');
    const spreads = await spread(fleet.urls(), `${keyPrefix}-spread`, Math.max(2 * ctx.durationMs, 10_000));

    const total = reports.reduce((sum, r) => sum + r.acquisitions, 0);
    const all = reports.reduce((sum, r) => sum + r.perTask.length, 0);
    const waits = summarize(reports.flatMap((r) => r.waitsMs));
    const perTask = reports.flatMap((r) => r.perTask);
    const failures = reports.reduce((sum, r) => sum + r.failures, 0);
    const overlaps = reports.reduce((sum, r) => sum + r.overlaps, 0);
    const overall = markdownTable(
      ['acquisitions/s', 'wait p50', 'wait p99', 'wait max', 'wait mean', 'waits sampled', 'overlaps', 'failures'],
      [
        [
          num(total / (ctx.durationMs / 1000)),
          ms(waits.p50),
          ms(waits.p99),
          ms(waits.max),
          ms(waits.mean),
          num(waits.count),
          String(overlaps),
          String(failures),
        ],
      ],
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
    const latency = markdownTable(
      ['lock() uncontended', 'p50', 'p99', 'max', 'samples'],
      [
        [`Redlock, ${MASTERS} masters`, ms(latencyRedlock.p50), ms(latencyRedlock.p99), ms(latencyRedlock.max), num(latencyRedlock.count)],
        ['single master (createClient)', ms(latencySingle.p50), ms(latencySingle.p99), ms(latencySingle.max), num(latencySingle.count)],
      ],
      'lrrrr',
    );
    const allAcquisitions = reports.reduce((sum, r) => sum + r.allAcquisitions, 0) + PROCESSES;
    const spreadTable = markdownTable(
      ['holds sampled 50 ms in', ...[5, 4, 3].map((n) => `on ${n} of ${MASTERS}`), 'fewer', 'on ≥ 4'],
      [
        [
          num(spreads.length),
          ...[5, 4, 3].map((n) => num(spreads.filter((c) => c === n).length)),
          num(spreads.filter((c) => c < 3).length),
          pct(spreads.filter((c) => c >= 4).length / (spreads.length || 1)),
        ],
      ],
      'rrrrrr',
    );
    const lines = [
      overall,
      '',
      `${PROCESSES} processes × ${TASKS} tasks (${all} loops), lock({ leaseMs: ${LEASE_MS} }) + empty critical section + unlock(), ` +
        `${ctx.warmupMs} ms warm-up then ${ctx.durationMs} ms measured, over ${MASTERS} masters (quorum ${Math.floor(MASTERS / 2) + 1}). ` +
        `Wait = lock() call to acquired. Overlaps = critical sections that found another holder's mark in a shared key (must be 0). ` +
        `${num(scripts / Math.max(1, allAcquisitions), 1)} script calls per acquisition over all masters ` +
        `(${num(scripts / Math.max(1, allAcquisitions) / MASTERS, 1)} per master: the winning round, the rounds the other waiters lost, ` +
        `the releases of partial grants and the unlock); ` +
        `${leftOver} master(s) still had the key after the run (must be 0: partial grants are cleared at once). ` +
        `Tasks with fewest/most acquisitions: ${Math.min(...perTask)}/${Math.max(...perTask)}.`,
      '',
      fairness,
      '',
      latency,
      '',
      'An uncontended Redlock acquire is decided as soon as a majority granted (the other masters join the hold as they answer); ' +
        'a single master is one script call. Client and servers share the machine.',
      '',
      spreadTable,
      '',
      '4 clients × 2 tasks in one process on one name, each hold lasting 50 ms; 50 ms into each hold the 5 masters are read and the ' +
        "holder's key counted (a hold needs 3 of 5; a spread hold survives the loss of any one master). Holds spread to the masters " +
        "that other clients' failed partial grants held, once those free up.",
    ];
    const firstError = reports.find((r) => r.firstError)?.firstError;
    if (firstError) lines.push('', `First failure: ${firstError}`);
    return lines.join('\n');
  } finally {
    await Promise.all(admins.map((admin) => admin.quit().catch(() => admin.disconnect())));
    await fleet.stop();
  }
}
