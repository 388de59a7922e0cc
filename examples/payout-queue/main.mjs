// @ts-check
/**
 * Non-reentrant fair lock: payout runs from three services (three forked
 * processes) take `getNonReentrantFairLock('payouts')` one at a time. The runs
 * are submitted one after another while the lock is busy; they must run in
 * submission order whichever process submitted them, never two at once, and a
 * run's task can never take the lock twice: its `tryLock()` is false, and the
 * first run's second `lock()` (more payouts turned up mid-run) queues behind
 * every run submitted before it and is served last.
 *
 *   npm run build && node examples/payout-queue/main.mjs
 *   REDIS_URL=redis://127.0.0.1:6390 node examples/payout-queue/main.mjs   # an existing server; only its own keys are touched
 *
 * Exit code 0 only if every expectation held, 1 otherwise.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createClient } from '@org/rlock';
import { RedisFleet } from '@org/rlock-testing';

const SERVICES = ['billing', 'refunds', 'payroll'];
const RUNS = 9;
const RUN_MS = 20;
/** The whole example must finish within this, or it fails instead of hanging. */
const TIMEOUT_MS = 45_000;

const started = performance.now();
const runId = randomBytes(6).toString('hex');
const keyPrefix = `payout-queue-${runId}`;
const dataPrefix = `payout-queue-${runId}-data`;
/** The lock's wait queue, from rlock's public data layout. */
const queueKey = `${keyPrefix}:{payouts}:queue`;

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
/** @type {import('@org/rlock').RLockClient[]} */
const clients = [];
/** @type {import('node:child_process').ChildProcess[]} */
const children = [];
let cleanedUp = false;

async function cleanUp() {
  if (cleanedUp) return;
  cleanedUp = true;
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.allSettled(clients.map((client) => client.close()));
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
 * @typedef {{ service: string, runs: number, overlaps: number, problems: string[] }} ServiceResult
 */

/**
 * Forks one payout service (see worker.mjs).
 * @param {import('./worker.mjs').WorkerConfig} config
 * @returns {{ child: import('node:child_process').ChildProcess, result: Promise<ServiceResult> }}
 */
function startService(config) {
  const child = fork(fileURLToPath(new URL('./worker.mjs', import.meta.url)), [], {
    env: { ...process.env, PAYOUT_WORKER: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  const result = new Promise((resolve, reject) => {
    child.on('message', (/** @type {any} */ message) => message?.type === 'done' && resolve(message.result));
    child.on('exit', (code, signal) => reject(new Error(`${config.service} exited (${code ?? signal}) before reporting`)));
  });
  result.catch(() => {}); // awaited below
  return { child, result };
}

/** Resolves once `check` is true (polled every 5 ms), or false after `timeoutMs`. */
async function until(/** @type {() => Promise<boolean>} */ check, /** @type {number} */ timeoutMs) {
  const end = performance.now() + timeoutMs;
  while (performance.now() < end) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 5));
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
  log(`Payout queue: ${RUNS} runs from ${SERVICES.length} service processes (${SERVICES.join(', ')}), ${RUN_MS} ms each under 'payouts'`);
  log(`Redis: ${process.env.REDIS_URL ? `${url} (REDIS_URL, keys ${keyPrefix}*)` : `${url} (own RedisFleet)`}`);

  // While the runs are submitted, the lock is busy (an earlier run, here main's).
  const client = createClient({ redis: url, keyPrefix });
  clients.push(client);
  const busy = await client.getNonReentrantFairLock('payouts').acquire({ leaseMs: 30_000 });
  log(`the lock is busy (fencing token ${busy.token}); submitting runs`);

  const services = SERVICES.map((service) => startService({ service, url: /** @type {string} */ (url), keyPrefix, dataPrefix, runMs: RUN_MS, queued: RUNS }));
  /** @type {string[]} */
  const submittedBy = [];
  for (let run = 0; run < RUNS; run++) {
    const index = run % SERVICES.length;
    const again = run === 0;
    services[index]?.child.send({ type: 'submit', run, again });
    // Submitted: the run's first try put it in the queue, behind the runs before it.
    const queued = await until(async () => (await admin?.llen(queueKey)) === run + 1, 10_000);
    if (!queued) throw new Error(`run ${run} never joined the queue`);
    submittedBy.push(/** @type {string} */ (SERVICES[index]));
    log(`submitted run ${run} from ${SERVICES[index]}${again ? ' (it will ask for the lock again mid-run)' : ''}`);
  }
  await busy.unlock();
  log('the lock is released: the queue is served');
  for (const { child } of services) child.send({ type: 'end' });
  const results = await Promise.all(services.map(({ result }) => result));

  const runLog = await admin.lrange(`${dataPrefix}:log`, 0, -1);
  const maxHolders = Number(await admin.get(`${dataPrefix}:max-holders`));
  log(`run log: ${runLog.join(' | ')}`);
  for (const r of results) {
    log(`${r.service}: ${r.runs} runs, ${r.overlaps} overlaps seen, ${r.problems.length} problems`);
    for (const problem of r.problems) console.log(`    ${r.service}: ${problem}`);
  }

  const expected = [...Array.from({ length: RUNS }, (_, run) => String(run)), '0 again'];
  console.log('');
  expect(runLog.slice(0, RUNS).join(',') === expected.slice(0, RUNS).join(','), `the runs held the lock in submission order across the three processes`);
  expect(
    runLog.length === RUNS + 1 && runLog[RUNS] === '0 again',
    `run 0's second lock() was not a reentry: it queued behind the ${RUNS - 1} runs submitted before it and was served last`,
  );
  expect(maxHolders === 1 && results.every((r) => r.overlaps === 0), `never two runs holding the lock at once (most at once: ${maxHolders})`);
  expect(
    results.every((r) => r.problems.length === 0),
    'in every hold, tryLock() by the holding task was false and getHoldCount() was 1 (no run failed)',
  );
  expect((await admin.exists(`${keyPrefix}:{payouts}`)) === 0 && (await admin.llen(queueKey)) === 0, 'the lock is free and its queue empty at the end');

  console.log(
    failures.length === 0
      ? `\nOK: every expectation held (${((performance.now() - started) / 1000).toFixed(1)} s)`
      : `\nFAILED: ${failures.length} expectation(s) did not hold:\n${failures.map((f) => `  - ${f}`).join('\n')}`,
  );
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
  console.error('payout-queue failed:', error);
} finally {
  clearTimeout(timer);
  await cleanUp();
}
process.exit(exitCode);
