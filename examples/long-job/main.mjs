// @ts-check
/**
 * Long job: a job that runs longer than its lease, kept alive by the watchdog,
 * that stops the moment its lock is lost, and a fencing token that stops a
 * stale holder's write.
 *
 *   npm run build && node examples/long-job/main.mjs
 *   REDIS_URL=redis://127.0.0.1:6390 node examples/long-job/main.mjs   # an existing server; only its own keys are touched
 *
 * Part 1  a ~5 s job under a 1.5 s watchdog lease: renewed every 500 ms, another
 *         client's tryLock fails throughout, the lock is free afterwards.
 * Part 2  the same job; its key is deleted from outside mid-job: the job's signal
 *         aborts with LockLostError, the job stops at once, withLock rejects.
 * Part 3  fencing: a holder's write is held up on the way to the storage while
 *         its lock passes to another client; the storage refuses the stale write.
 *
 * Exit code 0 only if every expectation held, 1 otherwise.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createClient } from '@org/rlock';
import { RedisFleet } from '@org/rlock-testing';

/** Lease of a hold taken without leaseMs; the watchdog renews it every third (500 ms). */
const WATCHDOG_TIMEOUT_MS = 1_500;
/**
 * The job: STEPS steps of STEP_MS each, about 5 s, over three times the lease.
 * Steps are not a multiple of the renewal period, so a loss shows up mid-step.
 */
const STEPS = 8;
const STEP_MS = 650;
/** The whole example must finish within this, or it fails instead of hanging. */
const TIMEOUT_MS = 30_000;
/**
 * Sanity limits, not speed claims: a deleted key is noticed at the next renewal
 * (within a period, 500 ms), and a job stops as soon as its signal aborts.
 */
const NOTICE_LIMIT_MS = WATCHDOG_TIMEOUT_MS;
const STOP_LIMIT_MS = 250;

const started = performance.now();
const runId = randomBytes(6).toString('hex');
const keyPrefix = `long-job-${runId}`;

/** @param {number} at performance.now() */
const stamp = (at = performance.now()) => `[+${((at - started) / 1000).toFixed(2)} s]`;
/** @param {string} message */
const log = (message) => console.log(`${stamp()} ${message}`);

/** @type {string[]} */
const failures = [];
/**
 * Records and prints one expectation.
 * @param {boolean} ok @param {string} what
 */
function expect(ok, what) {
  console.log(`${ok ? '  ✓' : '  ✗'} ${what}`);
  if (!ok) failures.push(what);
}

/** @param {unknown} error */
const isLockLost = (error) => error instanceof Error && /** @type {{ code?: unknown }} */ (error).code === 'ERR_RLOCK_LOCK_LOST';
/** @param {unknown} error */
const describe = (error) =>
  error instanceof Error ? `${error.name}${'reason' in error ? ` (reason: ${String(error.reason)})` : ''}: ${error.message}` : String(error);

/**
 * Waits `ms`, or rejects with `signal.reason` (here: a LockLostError) the moment
 * the signal aborts: this is how the job's awaits stop promptly.
 * @param {number} ms @param {AbortSignal} [signal]
 * @returns {Promise<void>}
 */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * @typedef {object} JobReport
 * @property {number} stepsDone
 * @property {number | undefined} abortedAt when the signal aborted (performance.now())
 * @property {number | undefined} stoppedAt when the job stopped because of it
 */

/**
 * The long job: STEPS steps of work. It never starts a step without the lock
 * (`signal.throwIfAborted()`), and hands the signal to every await, so a lost
 * lock stops it within the step it is in, not at the end of it.
 * @param {AbortSignal} signal
 * @param {JobReport} report filled in as it runs
 * @param {(step: number) => void} [onStep] called as each step begins
 */
async function longJob(signal, report, onStep) {
  signal.addEventListener('abort', () => {
    report.abortedAt = performance.now();
    log(`job: signal aborted — ${describe(signal.reason)}`);
  });
  try {
    for (let step = 1; step <= STEPS; step++) {
      signal.throwIfAborted(); // never start a step without the lock
      onStep?.(step);
      await sleep(STEP_MS, signal); // the step's work; a real job passes `signal` to fetch, queries, streams…
      report.stepsDone = step;
      log(`job: step ${step}/${STEPS} done`);
    }
  } catch (error) {
    if (signal.aborted) {
      report.stoppedAt = performance.now();
      log(`job: stopped after ${report.stepsDone} of ${STEPS} steps`);
    }
    throw error;
  }
  return `${STEPS} steps`;
}

/** Thrown by the storage for a write whose token is below the largest it has seen. */
class StaleTokenError extends Error {
  name = 'StaleTokenError';
}

/**
 * The resource the lock protects, here a tiny in-memory store. It checks the
 * fencing token itself: a write whose token is smaller than the largest it has
 * seen comes from a holder whose lock has since passed to someone else, and is
 * refused. (The same holder may write again with its own, equal token.)
 */
class FencedStorage {
  /** @type {bigint} */
  #highestToken = 0n;
  /** @type {string | undefined} */
  value;

  /**
   * @param {string} value
   * @param {string | undefined} token the writer's fencing token (a decimal string)
   * @throws StaleTokenError
   */
  write(value, token) {
    if (token === undefined) throw new StaleTokenError('write without a fencing token');
    const fence = BigInt(token); // tokens are decimal integers below 2^53; BigInt compares them exactly
    if (fence < this.#highestToken) {
      throw new StaleTokenError(`token ${token} < ${this.#highestToken} already seen: the writer no longer holds the lock`);
    }
    this.#highestToken = fence;
    this.value = value;
  }
}

/** @type {RedisFleet | undefined} */
let fleet;
/** @type {Redis | undefined} */
let admin;
/** @type {import('@org/rlock').RLockClient[]} */
const clients = [];
let cleanedUp = false;

/** Deletes this run's keys on a server we do not own (SCAN, never FLUSH). */
async function deleteRunKeys(/** @type {Redis} */ redis) {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

async function cleanUp() {
  if (cleanedUp) return;
  cleanedUp = true;
  await Promise.allSettled(clients.map((client) => client.close()));
  if (admin) {
    try {
      if (!fleet) await deleteRunKeys(admin);
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
 * The key of a lock, from rlock's public data layout: `<prefix>:{<name>}`.
 * @param {string} name
 */
const lockKey = (name) => `${keyPrefix}:{${name}}`;

/**
 * Part 1: a job longer than the lease, kept alive by the watchdog.
 * @param {import('@org/rlock').RLockClient} worker
 * @param {import('@org/rlock').RLockClient} other
 */
async function part1(worker, other) {
  console.log(`\n## Part 1 — a ${(STEPS * STEP_MS) / 1000} s job under a ${WATCHDOG_TIMEOUT_MS} ms watchdog lease\n`);
  const name = 'report:nightly';
  const lock = worker.getLock(name);
  const otherLock = other.getLock(name);

  let renewals = 0;
  /** @param {import('@org/rlock').LockRenewedEvent} event */
  const onRenewed = ({ count }) => {
    renewals++;
    log(`watchdog: lease renewed (${count} hold${count === 1 ? '' : 's'} in one script call)`);
  };
  worker.on('lockRenewed', onRenewed);

  /** @type {boolean[]} */
  const probes = [];
  let jobRunning = true;
  const stopProbing = new AbortController();
  // Another client tries the lock every 700 ms while the job runs: it must keep failing.
  const prober = (async () => {
    await sleep(300, stopProbing.signal);
    while (jobRunning) {
      const got = await other.task(async () => {
        const ok = await otherLock.tryLock();
        if (ok) await otherLock.unlock();
        return ok;
      });
      if (!jobRunning) break;
      probes.push(got);
      log(`other client: tryLock() → ${got}   (lock TTL ${await otherLock.remainTimeToLive()} ms)`);
      await sleep(700, stopProbing.signal);
    }
  })().catch((error) => {
    if (!stopProbing.signal.aborted) throw error;
  });

  /** @type {JobReport} */
  const report = { stepsDone: 0, abortedAt: undefined, stoppedAt: undefined };
  const jobStart = performance.now();
  let result;
  /** @type {unknown} */
  let failure;
  try {
    result = await lock.withLock(async ({ signal, token }) => {
      log(`job: lock acquired, fencing token ${token}`);
      return longJob(signal, report);
    });
  } catch (error) {
    failure = error;
  } finally {
    jobRunning = false;
    stopProbing.abort();
    worker.off('lockRenewed', onRenewed);
  }
  const jobMs = performance.now() - jobStart;
  log(`job: withLock → ${failure === undefined ? `resolved (${result})` : `rejected: ${describe(failure)}`}`);
  await prober;

  const freeAfter = !(await otherLock.isLocked());
  const otherGotItAfter = await other.task(async () => {
    const ok = await otherLock.tryLock();
    if (ok) await otherLock.unlock();
    return ok;
  });
  log(`after the job: isLocked() → ${!freeAfter}; other client's tryLock() → ${otherGotItAfter}`);

  console.log('');
  expect(failure === undefined && report.stepsDone === STEPS, `the job finished all ${STEPS} steps and withLock resolved`);
  expect(jobMs > 2 * WATCHDOG_TIMEOUT_MS, `it ran ${Math.round(jobMs)} ms, more than twice the ${WATCHDOG_TIMEOUT_MS} ms lease`);
  expect(
    renewals >= Math.floor(jobMs / WATCHDOG_TIMEOUT_MS),
    `the watchdog renewed the lease ${renewals} times (at least ${Math.floor(jobMs / WATCHDOG_TIMEOUT_MS)} needed to outlive the lease)`,
  );
  expect(report.abortedAt === undefined, "the job's signal never aborted");
  expect(probes.length > 0 && probes.every((got) => got === false), `the other client's tryLock failed all ${probes.length} times during the job`);
  expect(freeAfter && otherGotItAfter, 'the lock is free once the job is done (the other client takes it at once)');
}

/**
 * Part 2: the lock is lost mid-job (the key is deleted from outside, as an
 * expiry or an admin would), and the job stops.
 * @param {import('@org/rlock').RLockClient} worker
 * @param {Redis} redis the admin connection
 */
async function part2(worker, redis) {
  console.log('\n## Part 2 — the same job loses its lock mid-way\n');
  const name = 'report:nightly';
  const lock = worker.getLock(name);
  /** @type {import('@org/rlock').LockLostEvent[]} */
  const lostEvents = [];
  /** @param {import('@org/rlock').LockLostEvent} event */
  const onLost = (event) => {
    lostEvents.push(event);
    log(`client: lockLost event — ${event.name}, reason ${event.reason}, token ${event.token}`);
  };
  worker.on('lockLost', onLost);

  /** @type {JobReport} */
  const report = { stepsDone: 0, abortedAt: undefined, stoppedAt: undefined };
  let deletedAt = 0;
  /** @type {Promise<void>} */
  let deletion = Promise.resolve();
  /** @type {unknown} */
  let failure;
  let result;
  try {
    result = await lock.withLock(async ({ signal, token }) => {
      log(`job: lock acquired, fencing token ${token}`);
      return longJob(signal, report, (step) => {
        // Half-way through step 4 (after several renewals), the key disappears.
        if (step === 4) {
          deletion = sleep(STEP_MS / 2).then(async () => {
            const removed = await redis.del(lockKey(name));
            deletedAt = performance.now();
            log(`outside: DEL ${lockKey(name)} → ${removed}   (an expiry, an admin, a failover…)`);
          });
        }
      });
    });
  } catch (error) {
    failure = error;
  } finally {
    worker.off('lockLost', onLost);
  }
  const settledAt = performance.now();
  await deletion;
  log(`job: withLock → ${failure === undefined ? `resolved (${result})` : `rejected: ${describe(failure)}`}`);

  const noticeMs = (report.abortedAt ?? Number.NaN) - deletedAt;
  const stopMs = (report.stoppedAt ?? Number.NaN) - (report.abortedAt ?? Number.NaN);
  console.log('');
  expect(deletedAt > 0, 'the key was deleted mid-job');
  expect(
    report.abortedAt !== undefined && noticeMs >= 0 && noticeMs <= NOTICE_LIMIT_MS,
    `the job's signal aborted ${Math.round(noticeMs)} ms after the key was deleted (at the next renewal; limit ${NOTICE_LIMIT_MS} ms)`,
  );
  expect(
    lostEvents.length === 1 && lostEvents[0]?.reason === 'expired',
    `the client emitted one lockLost, reason "${lostEvents[0]?.reason}" (a key found gone is "expired")`,
  );
  expect(
    report.stoppedAt !== undefined && stopMs <= STOP_LIMIT_MS && report.stepsDone < STEPS,
    `the job stopped ${Math.round(stopMs)} ms after the abort, mid-step, after ${report.stepsDone} of ${STEPS} steps ` + `(limit ${STOP_LIMIT_MS} ms)`,
  );
  expect(isLockLost(failure), `withLock rejected with LockLostError (${describe(failure)})`);
  expect(settledAt - (report.abortedAt ?? settledAt) <= STOP_LIMIT_MS + 1_000, 'withLock settled promptly after the loss');
}

/**
 * Part 3: fencing. Holder A's write is delayed on its way to the storage (a slow
 * network, or A paused between its check and its write); meanwhile A's key goes
 * away and client B takes the lock and writes. A's write arrives last, with an
 * older token, and the storage refuses it.
 * @param {import('@org/rlock').RLockClient} worker holder A
 * @param {import('@org/rlock').RLockClient} other holder B
 * @param {Redis} redis the admin connection
 */
async function part3(worker, other, redis) {
  console.log("\n## Part 3 — fencing tokens: the storage refuses a stale holder's write\n");
  const name = 'ledger:7';
  const storage = new FencedStorage();

  const a = await worker.getLock(name).acquire();
  log(`A: acquired ${name}, fencing token ${a.token}`);
  storage.write('written by A (first write)', a.token);
  log(`A: write with token ${a.token} → accepted`);

  // A checks its signal (still fine), then sends its second write; the write is
  // held up on the way (a network delay, or A paused right after the check).
  const heldWhenSent = !a.signal.aborted;
  /** @type {() => void} */
  let deliver = () => {};
  const network = new Promise((resolve) => (deliver = () => resolve(undefined)));
  const staleWrite = network.then(() => storage.write('written by A (second write)', a.token));
  staleWrite.catch(() => {}); // inspected below
  log('A: second write sent … and delayed in the network');

  // Meanwhile A's lease runs out (simulated: the key is deleted) and B takes the lock.
  await redis.del(lockKey(name));
  log(`outside: DEL ${lockKey(name)}   (A's lease ran out while its write was on the way)`);
  const b = await other.getLock(name).acquire({ waitMs: 2_000 });
  log(`B: acquired ${name}, fencing token ${b.token}`);
  storage.write('written by B', b.token);
  log(`B: write with token ${b.token} → accepted`);

  // A's delayed write finally arrives.
  deliver();
  /** @type {unknown} */
  let refusal;
  try {
    await staleWrite;
    log(`A: delayed write with token ${a.token} → accepted (!)`);
  } catch (error) {
    refusal = error;
    log(`A: delayed write with token ${a.token} → refused: ${describe(error)}`);
  }

  // A learns of the loss at its next renewal: the key is gone or now B's.
  const lostReason = await Promise.race([
    new Promise((resolve) => {
      if (a.signal.aborted) resolve(a.signal.reason);
      else a.signal.addEventListener('abort', () => resolve(a.signal.reason), { once: true });
    }),
    sleep(NOTICE_LIMIT_MS).then(() => undefined),
  ]);
  log(`A: signal ${lostReason === undefined ? 'has not aborted' : `aborted — ${describe(lostReason)}`}`);
  /** @type {unknown} */
  let unlockError;
  await a.unlock().catch((error) => (unlockError = error));
  log(`A: unlock() → ${unlockError === undefined ? 'resolved' : `rejected: ${describe(unlockError)}`}`);
  await b.unlock();
  log('B: unlock() → resolved');

  console.log('');
  expect(heldWhenSent, "A's signal had not aborted when it sent its second write");
  expect(BigInt(b.token ?? '0') > BigInt(a.token ?? '0'), `B's token ${b.token} is larger than A's ${a.token}`);
  expect(refusal instanceof StaleTokenError, "the storage refused A's stale write");
  expect(storage.value === 'written by B', `the storage holds B's write ("${storage.value}")`);
  expect(isLockLost(lostReason), "A's signal aborted with LockLostError");
  expect(isLockLost(unlockError), "A's unlock() rejected with LockLostError");
}

async function main() {
  let url = process.env.REDIS_URL;
  if (!url) {
    fleet = await RedisFleet.start({ size: 1 });
    url = fleet.url(0);
  }
  admin = new Redis(url);
  const options = { redis: url, keyPrefix, watchdogTimeoutMs: WATCHDOG_TIMEOUT_MS };
  const worker = createClient(options);
  const other = createClient(options);
  clients.push(worker, other);
  for (const [label, client] of /** @type {const} */ ([
    ['worker', worker],
    ['other', other],
  ])) {
    client.on('error', (error) => log(`${label} client: background error — ${describe(error)}`));
  }
  console.log(
    `Long job: watchdogTimeoutMs ${WATCHDOG_TIMEOUT_MS} ms (renewal every ${WATCHDOG_TIMEOUT_MS / 3} ms), ` +
      `job of ${STEPS} × ${STEP_MS} ms\n` +
      `Redis: ${process.env.REDIS_URL ? `${url} (REDIS_URL, keys ${keyPrefix}*)` : `${url} (own RedisFleet)`}`,
  );

  await part1(worker, other);
  await part2(worker, admin);
  await part3(worker, other, admin);
}

let exitCode = 1;
/** @type {NodeJS.Timeout | undefined} */
let timer;
try {
  await Promise.race([
    main(),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the example did not finish within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    }),
  ]);
  console.log(
    failures.length === 0
      ? `\nOK: every expectation held (${((performance.now() - started) / 1000).toFixed(1)} s)`
      : `\nFAILED: ${failures.length} expectation(s) did not hold:\n${failures.map((f) => `  - ${f}`).join('\n')}`,
  );
  exitCode = failures.length === 0 ? 0 : 1;
} catch (error) {
  console.error('\nFAILED: long-job could not run:', error);
} finally {
  clearTimeout(timer);
  await cleanUp();
}
process.exit(exitCode);
