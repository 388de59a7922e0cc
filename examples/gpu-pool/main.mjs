// @ts-check
/**
 * GPU pool: a pool of GPUS GPUs shared by trainer processes through a
 * permit-expirable semaphore. Every job holds a GPU permit with a lease the
 * watchdog renews while the job runs; a trainer that dies with a GPU in hand
 * gives it back by itself when its lease lapses; a job whose fixed lease runs
 * out is stopped by its signal. A count-down latch tells main.mjs when every
 * job is done.
 *
 *   npm run build && node examples/gpu-pool/main.mjs
 *   REDIS_URL=redis://127.0.0.1:6390 node examples/gpu-pool/main.mjs   # an existing server; only its own keys are touched
 *
 * Part 1  TRAINERS processes run JOBS jobs each (2 at a time) on 2 GPUs; one
 *         more process takes a GPU and is SIGKILLed while holding it. Never
 *         more jobs on GPUs than GPUs; the dead process's GPU is back after
 *         its lease (1.5 s); every job of the live trainers finishes (the
 *         latch reaches zero); the pool ends full.
 * Part 2  a job on a fixed 500 ms lease runs too long: its signal aborts with
 *         LockLostError (expired) at the lease's end, the job stops there,
 *         release() reports the loss, and the GPU is back in the pool.
 *
 * Exit code 0 only if every expectation held, 1 otherwise.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createClient } from '@org/rlock';
import { RedisFleet } from '@org/rlock-testing';

const GPUS = 2;
const TRAINERS = 2;
const JOBS = 6;
const CONCURRENCY = 2;
const JOB_MS = 250;
/** The watchdog lease of every GPU permit: renewed every 500 ms while its job runs. */
const WATCHDOG_TIMEOUT_MS = 1_500;
/** Part 2's fixed lease, shorter than its job. */
const FIXED_LEASE_MS = 500;
/** The whole example must finish within this, or it fails instead of hanging. */
const TIMEOUT_MS = 60_000;

const started = performance.now();
const runId = randomBytes(6).toString('hex');
const keyPrefix = `gpu-pool-${runId}`;
const dataPrefix = `gpu-pool-${runId}-data`;

/** @param {string} message */
const log = (message) => console.log(`[+${((performance.now() - started) / 1000).toFixed(2)} s] ${message}`);

/** @type {string[]} */
const failures = [];
/** @param {boolean} ok @param {string} what */
function expect(ok, what) {
  console.log(`${ok ? '  ✓' : '  ✗'} ${what}`);
  if (!ok) failures.push(what);
}

/** @type {RedisFleet | undefined} */
let fleet;
/** @type {Redis | undefined} */
let admin;
/** @type {import('node:child_process').ChildProcess[]} */
const children = [];
let cleanedUp = false;

async function cleanUp() {
  if (cleanedUp) return;
  cleanedUp = true;
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (admin) {
    try {
      if (!fleet) {
        // On a server we do not own, delete only this run's keys (SCAN, never FLUSH).
        for (const pattern of [`${keyPrefix}*`, `${dataPrefix}*`]) {
          let cursor = '0';
          do {
            const [next, found] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
            cursor = next;
            if (found.length > 0) await admin.del(...found);
          } while (cursor !== '0');
        }
      }
    } finally {
      await admin.quit().catch(() => admin?.disconnect());
    }
  }
  await fleet?.stop();
}
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping`);
    cleanUp().finally(() => process.exit(130));
  });
}

/**
 * Forks one worker (see worker.mjs) and calls `onMessage` with what it sends.
 * @param {import('./worker.mjs').WorkerConfig} config
 * @param {(message: any) => void} onMessage
 * @returns {{ child: import('node:child_process').ChildProcess, exited: Promise<number | null> }}
 */
function startWorker(config, onMessage) {
  const child = fork(fileURLToPath(new URL('./worker.mjs', import.meta.url)), [], {
    env: { ...process.env, GPU_POOL_WORKER: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  child.on('message', onMessage);
  return { child, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
}

/** Resolves once `check` is true (polled every 20 ms), or false after `timeoutMs`. */
async function until(/** @type {() => Promise<boolean>} */ check, /** @type {number} */ timeoutMs) {
  const end = performance.now() + timeoutMs;
  while (performance.now() < end) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}

async function main() {
  let url = process.env.REDIS_URL;
  if (!url) {
    fleet = await RedisFleet.start({ size: 1 });
    url = fleet.url(0);
  }
  admin = new Redis(url);
  const client = createClient({ redis: url, keyPrefix, watchdogTimeoutMs: WATCHDOG_TIMEOUT_MS });
  const pool = client.getPermitExpirableSemaphore('gpu');
  const jobsDone = client.getCountDownLatch('jobs');
  const holdersKey = `${keyPrefix}:{gpu}:holders`; // the public data layout: permit id → fencing token

  log(`GPU pool: ${GPUS} GPUs, ${TRAINERS} trainers × ${JOBS} jobs (${CONCURRENCY} at a time, ${JOB_MS} ms each), watchdog lease ${WATCHDOG_TIMEOUT_MS} ms`);
  log(`Redis: ${process.env.REDIS_URL ? `${url} (REDIS_URL, keys ${keyPrefix}*)` : `${url} (own RedisFleet)`}`);
  await pool.trySetPermits(GPUS);
  await jobsDone.trySetCount(TRAINERS * JOBS);

  // ---- Part 1 ---------------------------------------------------------------
  console.log('\nPart 1: a trainer dies holding a GPU');
  const common = { url, keyPrefix, dataPrefix, gpus: GPUS, jobs: JOBS, concurrency: CONCURRENCY, jobMs: JOB_MS, watchdogTimeoutMs: WATCHDOG_TIMEOUT_MS };
  /** @type {string} */
  const doomedId = await new Promise((resolve, reject) => {
    const { exited } = startWorker({ ...common, role: 'doomed', index: 0 }, (message) => message?.type === 'holding' && resolve(message.id));
    exited.then((code) => reject(new Error(`the doomed trainer exited (${code}) before taking a GPU`)));
  });
  const doomed = /** @type {import('node:child_process').ChildProcess} */ (children[0]);
  doomed.kill('SIGKILL');
  const killedAt = performance.now();
  log(`the doomed trainer took GPU permit ${doomedId} and was SIGKILLed holding it`);

  /** @type {{ index: number, done: number, errors: string[] }[]} */
  const results = [];
  const trainers = Array.from({ length: TRAINERS }, (_, i) =>
    startWorker({ ...common, role: 'trainer', index: i + 1 }, (message) => message?.type === 'done' && results.push(message.result)),
  );
  // The dead trainer's permit leaves the holders hash when a script reclaims it: the
  // waiting trainers retry exactly when its lease ends (their refused tries said when).
  const reclaimed = await until(async () => (await admin?.hexists(holdersKey, doomedId)) === 0, 10_000);
  const reclaimedMs = performance.now() - killedAt;
  log(`its permit was reclaimed ${Math.round(reclaimedMs)} ms after the kill`);
  const allDone = await jobsDone.await({ waitMs: 30_000 });
  const codes = await Promise.all(trainers.map((t) => t.exited));
  log(`every job done: ${allDone}; trainers exited with ${codes.join(', ')}`);

  const maxInUse = Number(await admin.get(`${dataPrefix}:max-in-use`));
  const completed = results.reduce((sum, r) => sum + r.done, 0);
  for (const r of results) for (const error of r.errors) console.log(`    trainer ${r.index}: ${error}`);
  expect(
    reclaimed && reclaimedMs >= WATCHDOG_TIMEOUT_MS - WATCHDOG_TIMEOUT_MS / 3 - 100 && reclaimedMs < WATCHDOG_TIMEOUT_MS + 2_500,
    `the dead trainer's GPU came back after its lease (${Math.round(reclaimedMs)} ms after the kill; lease ${WATCHDOG_TIMEOUT_MS} ms, last renewed at most ${WATCHDOG_TIMEOUT_MS / 3} ms before)`,
  );
  expect(maxInUse >= 1 && maxInUse <= GPUS, `never more jobs on GPUs than GPUs (most at once: ${maxInUse} of ${GPUS})`);
  expect(
    allDone && completed === TRAINERS * JOBS && codes.every((code) => code === 0),
    `every job of the live trainers finished (${completed} of ${TRAINERS * JOBS}; the latch reached zero)`,
  );
  expect((await pool.availablePermits()) === GPUS && (await admin.hlen(holdersKey)) === 0, `the pool is full again (${GPUS} GPUs available, no holders)`);

  // ---- Part 2 ---------------------------------------------------------------
  console.log('\nPart 2: a job outlives its fixed lease');
  const gpu = await pool.acquire({ leaseMs: FIXED_LEASE_MS });
  const jobStarted = performance.now();
  let steps = 0;
  /** @type {unknown} */
  let stoppedBy;
  try {
    // Ten 150 ms steps (1.5 s) on a 500 ms lease; each step honours the signal.
    for (let step = 0; step < 10; step++) {
      gpu.signal.throwIfAborted();
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, 150);
        gpu.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(gpu.signal.reason);
        });
      });
      steps++;
    }
  } catch (error) {
    stoppedBy = error;
  }
  const stoppedAfterMs = performance.now() - jobStarted;
  log(
    `the job stopped after ${steps} steps, ${Math.round(stoppedAfterMs)} ms: ${stoppedBy instanceof Error ? `${stoppedBy.name} (${/** @type {any} */ (stoppedBy).reason})` : 'not stopped'}`,
  );
  let releaseError;
  try {
    await gpu.release();
  } catch (error) {
    releaseError = error;
  }
  const isLost = (/** @type {unknown} */ e) => e instanceof Error && /** @type {any} */ (e).code === 'ERR_RLOCK_LOCK_LOST';
  expect(isLost(stoppedBy) && /** @type {any} */ (stoppedBy).reason === 'expired', 'its signal aborted with LockLostError (expired)');
  expect(
    stoppedAfterMs < FIXED_LEASE_MS + 300 && steps < 10,
    `the job stopped at its lease's end (${Math.round(stoppedAfterMs)} ms, lease ${FIXED_LEASE_MS} ms)`,
  );
  expect(isLost(releaseError), 'release() reported the loss (LockLostError)');
  expect((await pool.availablePermits()) === GPUS, 'the GPU was back in the pool');

  await client.close();
  console.log(failures.length === 0 ? '\nOK: every expectation held' : `\nFAILED: ${failures.length} expectation(s) did not hold`);
  return failures.length === 0;
}

let exitCode = 1;
/** @type {NodeJS.Timeout | undefined} */
let timer;
try {
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the example did not finish within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  });
  exitCode = (await Promise.race([main(), timeout])) ? 0 : 1;
} catch (error) {
  console.error('gpu-pool failed:', error);
} finally {
  clearTimeout(timer);
  await cleanUp();
}
process.exit(exitCode);
