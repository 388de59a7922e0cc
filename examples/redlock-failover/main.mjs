// @ts-check
/**
 * Redlock failover: five independent masters, two Redlock clients (think: two
 * services) with a few tasks each taking the same lock in a loop, and a master
 * that crashes in the middle of the run.
 *
 *   npm run build && node examples/redlock-failover/main.mjs
 *   TASKS=6 RUN_MS=6000 node examples/redlock-failover/main.mjs
 *
 * Phase 1  all 5 masters up: the tasks take turns on the lock.
 * Phase 2  master 0 is killed (SIGKILL) mid-run: holds taken before keep their
 *          lease on the 4 others (renewal needs 3 of 5), new acquisitions need
 *          3 of the 4 that are left. Nothing stops, nothing overlaps.
 * Phase 3  master 0 comes back (empty: no persistence). That is safe here
 *          because it stays down for longer than the longest lease in use
 *          (LEASE_MS): every lease it could have forgotten has run out.
 *
 * Every critical section is checked for overlap with an in-process counter and
 * with a mark in a Redis key only a holder may set (SET NX, on master 1). Exit
 * code 0 iff no two holders ever overlapped and every phase made progress.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createRedlock } from '@org/rlock';
import { RedisFleet } from '@org/rlock-testing';

/** @param {string} name @param {number} fallback */
function intFromEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return value;
}

const TASKS = intFromEnv('TASKS', 4);
/** Length of each phase. */
const PHASE_MS = intFromEnv('RUN_MS', 3_000);
/** The fixed lease of every acquisition; master 0 stays down longer than this. */
const LEASE_MS = 1_000;
/** The whole example must finish within this, or it fails instead of hanging. */
const TIMEOUT_MS = 60_000;

const started = performance.now();
const keyPrefix = `failover-${randomBytes(6).toString('hex')}`;
/** @param {string} message */
const log = (message) => console.log(`[+${((performance.now() - started) / 1000).toFixed(2)} s] ${message}`);

/** @type {string[]} */
const failures = [];
/** @param {boolean} ok @param {string} what */
function expect(ok, what) {
  console.log(`${ok ? '  ✓' : '  ✗'} ${what}`);
  if (!ok) failures.push(what);
}

const fleet = await RedisFleet.start({ size: 5 });
const stopTimer = setTimeout(() => {
  console.error(`no end after ${TIMEOUT_MS} ms: failing`);
  void fleet.stop().finally(() => process.exit(1));
}, TIMEOUT_MS);
stopTimer.unref();
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => void fleet.stop().finally(() => process.exit(130)));
}

// Two services, each with its own Redlock client over the same five masters.
const services = ['billing', 'reports'].map((name) => {
  const redlock = createRedlock({ masters: fleet.urls(), keyPrefix, perNodeTimeoutMs: 50 });
  let errors = 0;
  redlock.on('error', () => errors++); // a dead master's failed calls, reported in the background
  redlock.on('lockLost', (event) => log(`${name}: lost ${event.name} (${event.reason})`));
  return { name, redlock, errors: () => errors };
});
// A mark only the holder may set: a second holder would find it taken.
const marker = new Redis(fleet.url(1));
const markKey = `${keyPrefix}:inside`;

let inside = 0;
let overlaps = 0;
let phase = 1;
/** @type {number[]} */
const perPhase = [0, 0, 0, 0];
/** @type {Record<string, number>} */
const failuresByName = {};
let stop = false;

/** @param {{ name: string, redlock: import('@org/rlock').RedlockClient }} service @param {number} task */
async function worker(service, task) {
  const lock = service.redlock.getLock('ledger');
  await service.redlock.task(async () => {
    while (!stop) {
      try {
        await lock.lock({ leaseMs: LEASE_MS, waitMs: 5_000 });
      } catch (error) {
        // QuorumError while a majority is unreachable; LockAcquireTimeoutError if starved.
        const name = error instanceof Error ? error.name : String(error);
        failuresByName[name] = (failuresByName[name] ?? 0) + 1;
        continue;
      }
      try {
        if (++inside > 1) overlaps++;
        if ((await marker.set(markKey, `${service.name}/${task}`, 'PX', LEASE_MS, 'NX')) === null) overlaps++;
        await new Promise((resolve) => setTimeout(resolve, 2)); // the "work"
        await marker.del(markKey);
        perPhase[phase] = (perPhase[phase] ?? 0) + 1;
      } finally {
        inside--;
        await lock.unlock().catch((/** @type {unknown} */ error) => {
          const name = error instanceof Error ? error.name : String(error);
          failuresByName[`unlock ${name}`] = (failuresByName[`unlock ${name}`] ?? 0) + 1;
        });
      }
    }
  });
}

log(`5 masters up; ${services.length} services × ${TASKS} tasks take "ledger" in a loop (lease ${LEASE_MS} ms)`);
const workers = services.flatMap((service) => Array.from({ length: TASKS }, (_, task) => worker(service, task)));

await new Promise((resolve) => setTimeout(resolve, PHASE_MS));
phase = 2;
await fleet.kill(0);
const killedAt = performance.now();
log(`master 0 killed (SIGKILL); carrying on with 4 of 5 (quorum 3)`);

await new Promise((resolve) => setTimeout(resolve, Math.max(PHASE_MS, LEASE_MS + 100)));
// Safe to bring it back empty only once every lease it might have granted is over.
const downMs = performance.now() - killedAt;
phase = 3;
await fleet.restart(0);
log(`master 0 restarted empty after ${Math.round(downMs)} ms down (> the ${LEASE_MS} ms lease)`);

await new Promise((resolve) => setTimeout(resolve, PHASE_MS));
stop = true;
await Promise.all(workers);
const closed = await Promise.all(services.map((service) => service.redlock.close()));
await marker.quit();
await fleet.stop();
clearTimeout(stopTimer);

log('done');
console.log(
  `acquisitions: ${perPhase[1]} with 5 masters, ${perPhase[2]} with master 0 down, ${perPhase[3]} after it came back; ` +
    `calls that gave up: ${JSON.stringify(failuresByName)}; background errors: ${services.map((s) => `${s.name} ${s.errors()}`).join(', ')}`,
);
expect(overlaps === 0, `no two holders overlapped (${overlaps} overlaps)`);
expect((perPhase[1] ?? 0) > 0, 'progress with all 5 masters');
expect((perPhase[2] ?? 0) > 0, 'progress with master 0 down');
expect((perPhase[3] ?? 0) > 0, 'progress after master 0 came back');
expect(downMs > LEASE_MS, 'master 0 stayed down longer than the longest lease before coming back empty');
expect(
  closed.every((report) => report.failed.length === 0),
  'every client closed cleanly',
);
if (failures.length > 0) {
  console.log(`\nFAILED: ${failures.length} expectation(s) did not hold`);
  process.exit(1);
}
console.log('\nOK: the lock stayed exclusive and kept going through the loss of a master');
process.exit(0);
