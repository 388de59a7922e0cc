// @ts-check
/**
 * Spin lock: three report-builder processes share `getSpinLock('report:7')`.
 * Its waiters never subscribe: they retry after jittered, growing sleeps. The
 * example checks that the lock still excludes (never two builders at once,
 * every report written with a larger fencing token than the one before) and
 * that no waiter subscribed to anything of the lock's while they contended.
 *
 *   npm run build && node examples/spin-lock/main.mjs
 *   REDIS_URL=redis://127.0.0.1:6390 node examples/spin-lock/main.mjs   # an existing server; only its own keys are touched
 *
 * Part 1  BUILDERS forked processes build REPORTS reports each, BUILD_MS under
 *         the lock. main.mjs watches Redis meanwhile: no channel of the lock
 *         (`<prefix>:{report:7}:release…`) ever has a subscriber and the lock's
 *         waiting-clients key (`:clients`) never exists.
 * Part 2  the control: a plain `getLock` of the same name, whose waiter does
 *         subscribe, is seen by the same watch; so part 1's zero is a real zero.
 *
 * Exit code 0 only if every expectation held, 1 otherwise.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createClient } from '@org/rlock';
import { RedisFleet } from '@org/rlock-testing';

const BUILDERS = 3;
const REPORTS = 8;
const BUILD_MS = 15;
/** The spin lock's longest sleep between two tries (default 128 ms); shorter here so the lock changes hands sooner. */
const MAX_DELAY_MS = 32;
/** The whole example must finish within this, or it fails instead of hanging. */
const TIMEOUT_MS = 45_000;
const LOCK_NAME = 'report:7';

const started = performance.now();
const runId = randomBytes(6).toString('hex');
const keyPrefix = `spin-lock-${runId}`;
const dataPrefix = `spin-lock-${runId}-data`;
/** The lock's keys and channels, from rlock's public data layout. */
const lockKey = `${keyPrefix}:{${LOCK_NAME}}`;

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
 * Watches the lock's waiting machinery in Redis every few ms until stopped:
 * the channels of the lock that have a subscriber (`PUBSUB CHANNELS`, which
 * lists only channels with at least one), and whether the lock's
 * waiting-clients key exists.
 * @param {Redis} redis
 */
function watchWaiting(redis) {
  let running = true;
  let samples = 0;
  /** @type {Set<string>} */
  const subscribed = new Set();
  let clientsKeySeen = false;
  const done = (async () => {
    while (running) {
      const [channels, clientsKey] = await Promise.all([redis.pubsub('CHANNELS', `${lockKey}*`), redis.exists(`${lockKey}:clients`)]);
      samples++;
      for (const channel of /** @type {string[]} */ (channels)) subscribed.add(channel);
      if (clientsKey === 1) clientsKeySeen = true;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return { samples, subscribed: [...subscribed], clientsKeySeen };
    },
  };
}

/**
 * Forks one builder (see worker.mjs) and resolves with its result.
 * @param {import('./worker.mjs').WorkerConfig} config
 * @returns {Promise<{ index: number, built: number, refusedWrites: number, overlaps: number }>}
 */
function runBuilder(config) {
  const child = fork(fileURLToPath(new URL('./worker.mjs', import.meta.url)), [], {
    env: { ...process.env, SPIN_LOCK_WORKER: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.on('message', (/** @type {any} */ message) => message?.type === 'done' && resolve(message.result));
    child.on('exit', (code, signal) => reject(new Error(`builder ${config.index} exited (${code ?? signal}) before reporting`)));
  });
}

async function main() {
  let url = process.env.REDIS_URL;
  if (!url) {
    fleet = await RedisFleet.start({ size: 1 });
    url = fleet.url(0);
  }
  admin = new Redis(url);
  log(`Spin lock: ${BUILDERS} builder processes × ${REPORTS} reports, ${BUILD_MS} ms each under '${LOCK_NAME}', back-off up to ${MAX_DELAY_MS} ms`);
  log(`Redis: ${process.env.REDIS_URL ? `${url} (REDIS_URL, keys ${keyPrefix}*)` : `${url} (own RedisFleet)`}`);

  // ---- Part 1 ---------------------------------------------------------------
  console.log('\nPart 1: three processes contend for the spin lock');
  const watch = watchWaiting(admin);
  const results = await Promise.all(
    Array.from({ length: BUILDERS }, (_, i) =>
      runBuilder({ index: i + 1, url: /** @type {string} */ (url), keyPrefix, dataPrefix, reports: REPORTS, buildMs: BUILD_MS, maxDelayMs: MAX_DELAY_MS }),
    ),
  );
  const seen = await watch.stop();
  for (const r of results) log(`builder ${r.index}: built ${r.built} reports, ${r.refusedWrites} writes refused, ${r.overlaps} overlaps seen`);
  const maxHolders = Number(await admin.get(`${dataPrefix}:max-holders`));
  const maxWaiting = Number(await admin.get(`${dataPrefix}:max-waiting`));
  const written = await admin.llen(`${dataPrefix}:reports`);
  log(`most holders at once: ${maxHolders}; most builders waiting at once: ${maxWaiting}; reports in the store: ${written}`);
  log(`watched Redis ${seen.samples} times: lock channels with a subscriber: ${seen.subscribed.length === 0 ? 'none' : seen.subscribed.join(', ')}`);

  const built = results.reduce((sum, r) => sum + r.built, 0);
  expect(maxHolders === 1 && results.every((r) => r.overlaps === 0), `never two builders holding the lock at once (most at once: ${maxHolders})`);
  expect(
    built === BUILDERS * REPORTS && written === BUILDERS * REPORTS && results.every((r) => r.refusedWrites === 0),
    `every report (${built} of ${BUILDERS * REPORTS}) was written with a larger fencing token than the one before`,
  );
  expect(maxWaiting >= 2, `the lock was contended (up to ${maxWaiting} builders waiting at once)`);
  expect(seen.samples > 0 && seen.subscribed.length === 0, `no channel of the lock had a subscriber in ${seen.samples} looks (PUBSUB CHANNELS ${lockKey}*)`);
  expect(!seen.clientsKeySeen, `the lock's waiting-clients key ${lockKey}:clients never existed`);
  expect((await admin.exists(lockKey)) === 0, 'the lock is free at the end');

  // ---- Part 2 ---------------------------------------------------------------
  console.log("\nPart 2: the control — a plain lock's waiter does subscribe, and the same watch sees it");
  const holder = createClient({ redis: url, keyPrefix });
  const waiter = createClient({ redis: url, keyPrefix });
  clients.push(holder, waiter);
  const held = await holder.getLock(LOCK_NAME).acquire({ leaseMs: 10_000 });
  const control = watchWaiting(admin);
  const waiting = waiter.getLock(LOCK_NAME).withLock(async () => {}, { waitMs: 10_000 });
  // Wait until the plain lock's waiter is subscribed (at most 5 s), then let it in.
  const end = performance.now() + 5_000;
  while (performance.now() < end && (await admin.pubsub('CHANNELS', `${lockKey}:release:*`)).length === 0) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await held.unlock();
  await waiting;
  const controlSeen = await control.stop();
  log(`lock channels with a subscriber: ${controlSeen.subscribed.join(', ') || 'none'}`);
  expect(
    controlSeen.subscribed.some((channel) => channel.startsWith(`${lockKey}:release:`)),
    "a plain lock's waiter was seen subscribed to its release channel: the watch of part 1 would have seen a spin-lock waiter's",
  );

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
  console.error('spin-lock failed:', error);
} finally {
  clearTimeout(timer);
  await cleanUp();
}
process.exit(exitCode);
