// @ts-check
/**
 * One payout service of the non-reentrant-fair-lock example. main.mjs sends it
 * payout runs to submit, one at a time; each run is a task of its own on
 * `client.getNonReentrantFairLock('payouts')`. While a run holds the lock it
 * records itself in the example's run log, counts itself into a holders
 * counter, and asks for the lock again from the same task: `tryLock()` must be
 * false and `getHoldCount()` 1. The run main.mjs marks `again` also asks with
 * `lock()` while holding it (more payouts turned up), which must queue behind
 * every run already waiting and be served only after them, in its turn.
 * Talks to main.mjs over IPC:
 * ← { type: 'submit', run, again }   ← { type: 'end' }   → { type: 'done', result }
 */
import { Redis } from 'ioredis';
import { createClient } from '@org/rlock';

/**
 * @typedef {object} WorkerConfig What main.mjs hands each worker (env PAYOUT_WORKER, JSON).
 * @property {string} service the service's name
 * @property {string} url
 * @property {string} keyPrefix rlock keyPrefix
 * @property {string} dataPrefix prefix of the example's own keys (run log, counters)
 * @property {number} runMs how long one run holds the lock
 * @property {number} queued how many waiters the queue holds while an `again` run asks again (then it has asked)
 */

process.on('disconnect', () => process.exit(2)); // main.mjs is gone

/** @type {WorkerConfig} */
const config = JSON.parse(process.env.PAYOUT_WORKER ?? 'null');
if (!config) throw new Error('worker.mjs is started by main.mjs');

const client = createClient({ redis: config.url, keyPrefix: config.keyPrefix });
client.on('error', (error) => console.error(`[${config.service}] background error:`, error));
const data = new Redis(config.url);
const payouts = client.getNonReentrantFairLock('payouts');
const queueKey = `${config.keyPrefix}:{payouts}:queue`; // the public data layout

/** Counts one in (KEYS[1]) and keeps the high-water mark (KEYS[2]); returns the count. */
const ENTER = `local v = redis.call('INCR', KEYS[1])
if v > tonumber(redis.call('GET', KEYS[2]) or '0') then redis.call('SET', KEYS[2], v) end
return v`;
const key = (/** @type {string} */ name) => `${config.dataPrefix}:${name}`;

/** @type {string[]} */
const problems = [];
let overlaps = 0;

/**
 * The work done under the lock: logs the run, proves it is alone, and checks
 * that the task cannot take the lock a second time.
 * @param {string} entry what goes into the run log
 */
async function underLock(entry) {
  if ((await data.eval(ENTER, 2, key('holders'), key('max-holders'))) !== 1) overlaps++;
  try {
    await data.rpush(key('log'), entry);
    if (await payouts.tryLock()) problems.push(`${entry}: tryLock() by the holding task was true`);
    const holds = await payouts.getHoldCount();
    if (holds !== 1) problems.push(`${entry}: getHoldCount() was ${holds}`);
    await new Promise((resolve) => setTimeout(resolve, config.runMs)); // the payouts
  } finally {
    await data.decr(key('holders'));
  }
}

/**
 * One payout run, a task of its own. With `again`, while holding the lock it
 * asks for it a second time; that acquisition queues like anyone else's and is
 * granted after this task's release, in its turn.
 * @param {number} run @param {boolean} again
 */
const payoutRun = (run, again) =>
  client.task(async () => {
    await payouts.lock({ waitMs: 30_000 });
    /** @type {Promise<void> | undefined} */
    let second;
    try {
      await underLock(String(run));
      if (again) {
        second = payouts.lock({ waitMs: 30_000 });
        second.catch(() => {}); // awaited below, after the first hold's release
        // Asked: the second acquisition's first try put it in the queue.
        const end = performance.now() + 10_000;
        while ((await data.llen(queueKey)) !== config.queued) {
          if (performance.now() > end) {
            problems.push(`run ${run}: its second lock() never joined the queue`);
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
    } finally {
      await payouts.unlock();
    }
    if (second) {
      await second;
      try {
        await underLock(`${run} again`);
      } finally {
        await payouts.unlock();
      }
    }
  });

/** @type {Promise<void>[]} */
const runs = [];
process.on('message', (/** @type {any} */ message) => {
  if (message?.type === 'submit') {
    runs.push(
      payoutRun(message.run, message.again).catch((error) => {
        problems.push(`run ${message.run}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
      }),
    );
  } else if (message?.type === 'end') {
    void (async () => {
      await Promise.all(runs);
      await client.close();
      await data.quit();
      process.send?.({ type: 'done', result: { service: config.service, runs: runs.length, overlaps, problems } }, () => process.exit(0));
    })();
  }
});
