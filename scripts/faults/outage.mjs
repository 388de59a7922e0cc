// @ts-check
/**
 * The release during an outage, as users met it: a worker's `withLock`
 * returns while Redis is down (~12 s, then restarted from its AOF, which
 * kept the hold and its 30 s lease), so its release fails and is finished in
 * the background. Another worker, in another process, must get the lock
 * within 5 s of Redis being back, not when the lease runs out.
 *
 * Run by run.mjs (20 times in the long form); this file is also the worker
 * process (argument `worker`), with the client's defaults.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createClient, RedisUnavailableError, RLockError } from '@org/rlock';
import { RedisFleet } from '@org/rlock-testing';

const now = () => performance.timeOrigin + performance.now();
const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const OUTAGE_MS = 12_000;
export const BOUND_MS = 5_000;

if (process.argv[2] === 'worker') worker();

/**
 * @param {number} runs
 * @param {(line: string) => void} log
 * @returns {Promise<{ runs: number, passed: number, worstMs: number, results: { ms: number, ok: boolean, note: string }[] }>}
 */
export async function releaseOutage(runs, log) {
  const fleet = await RedisFleet.start({ size: 1, appendonly: true, appendfsync: 'always' });
  const results = [];
  try {
    for (let run = 0; run < runs; run += 1) {
      results.push(await once(fleet, run));
      const last = results[results.length - 1];
      log(
        `release during an outage ${run + 1}/${runs}: ${last.ok ? 'ok' : 'FAIL'}, lock taken ${Math.round(last.ms)} ms after Redis was back${last.note ? ` (${last.note})` : ''}`,
      );
    }
  } finally {
    await fleet.stop();
  }
  const passed = results.filter((result) => result.ok).length;
  return { runs, passed, worstMs: Math.max(0, ...results.map((result) => result.ms)), results };
}

/** One run: a holder and a waiter, each its own process. @param {RedisFleet} fleet @param {number} run */
async function once(fleet, run) {
  const keyPrefix = `outage${process.pid}r${run}`;
  const spawn = () => {
    const child = fork(fileURLToPath(import.meta.url), ['worker'], {
      env: { ...process.env, FAULTS_OUTAGE: JSON.stringify({ redis: fleet.url(0), keyPrefix }) },
    });
    /** @type {any[]} */
    const seen = [];
    const waiters = /** @type {{ e: string, resolve: (event: any) => void }[]} */ ([]);
    child.on('message', (/** @type {any} */ event) => {
      seen.push(event);
      for (const waiter of waiters.splice(0))
        if (waiter.e === event.e) waiter.resolve(event);
        else waiters.push(waiter);
    });
    const next = (/** @type {string} */ e, /** @type {number} */ ms) =>
      new Promise((resolve, reject) => {
        const found = seen.find((event) => event.e === e);
        if (found) return resolve(found);
        const timer = setTimeout(() => reject(new Error(`no ${e} within ${ms} ms`)), ms);
        waiters.push({ e, resolve: (event) => (clearTimeout(timer), resolve(event)) });
      });
    return { child, next, seen };
  };
  const holder = spawn();
  const waiter = spawn();
  try {
    await Promise.all([holder.next('ready', 20_000), waiter.next('ready', 20_000)]);
    holder.child.send({ type: 'hold' });
    await holder.next('inside', 10_000);
    await fleet.kill(0);
    const down = now();
    holder.child.send({ type: 'leave' });
    const left = /** @type {any} */ (await holder.next('left', 20_000));
    await sleep(Math.max(0, down + OUTAGE_MS - now()));
    await fleet.restart(0);
    const back = now();
    waiter.child.send({ type: 'take' });
    const taken = /** @type {any} */ (await waiter.next('taken', 60_000).catch(() => ({ t: Infinity })));
    const ms = taken.t - back;
    const foreign = [...holder.seen, ...waiter.seen].filter((event) => event.e === 'error' && !event.typed);
    const note = [
      left.code !== 'ERR_RLOCK_REDIS_UNAVAILABLE' ? `withLock settled with ${left.code ?? 'success'}` : '',
      foreign.length > 0 ? `${foreign.length} errors not rlock's` : '',
    ]
      .filter(Boolean)
      .join('; ');
    return { ms, ok: ms <= BOUND_MS && foreign.length === 0, note };
  } finally {
    holder.child.kill('SIGKILL');
    waiter.child.kill('SIGKILL');
  }
}

function worker() {
  const config = JSON.parse(process.env.FAULTS_OUTAGE ?? '{}');
  const send = (/** @type {Record<string, unknown>} */ event) => process.send?.({ t: now(), ...event });
  const client = createClient({ redis: config.redis, keyPrefix: config.keyPrefix });
  client.on('error', (error) => send({ e: 'error', typed: error instanceof RLockError, message: String(error) }));
  process.on('unhandledRejection', (reason) => send({ e: 'error', typed: false, message: `unhandled: ${String(reason)}` }));
  /** @type {() => void} */
  let leave = () => undefined;
  process.on('message', (/** @type {any} */ message) => {
    if (message.type === 'hold') {
      void client
        .getLock('job')
        .withLock(
          () =>
            new Promise((resolve) => {
              leave = () => resolve(undefined);
              send({ e: 'inside' });
            }),
        )
        .then(
          () => send({ e: 'left' }),
          (error) => send({ e: 'left', code: error instanceof RLockError ? error.code : String(error) }),
        );
    } else if (message.type === 'leave') leave();
    else if (message.type === 'take') void take();
  });
  const take = async () => {
    // Until its own connection is back, the waiter's calls fail at once: it asks again.
    for (;;) {
      try {
        const lock = client.getLock('job');
        const got = await client.task(async () => {
          if (!(await lock.tryLock({ waitMs: 1_000, leaseMs: 1_000 }))) return false;
          send({ e: 'taken' });
          await lock.unlock();
          return true;
        });
        if (got) return;
      } catch (error) {
        if (!(error instanceof RedisUnavailableError)) send({ e: 'error', typed: error instanceof RLockError, message: String(error) });
        await sleep(50);
      }
    }
  };
  send({ e: 'ready' });
}
