// @ts-check
/**
 * One report builder of the spin-lock example. It builds REPORTS reports, each
 * under `client.getSpinLock('report:7')`, and while it holds the lock it
 * proves it is alone: it counts itself into a holders counter (and keeps its
 * high-water mark), and writes to a fenced "report store" that refuses a
 * token not larger than the last one it accepted. It also counts itself in and
 * out of a waiting counter, so main.mjs can see the lock was contended.
 * Talks to main.mjs over IPC: → { type: 'done', result }.
 */
import { Redis } from 'ioredis';
import { createClient } from '@org/rlock';

/**
 * @typedef {object} WorkerConfig What main.mjs hands each worker (env SPIN_LOCK_WORKER, JSON).
 * @property {number} index
 * @property {string} url
 * @property {string} keyPrefix rlock keyPrefix
 * @property {string} dataPrefix prefix of the example's own keys (counters, report store)
 * @property {number} reports how many reports this worker builds
 * @property {number} buildMs how long one build holds the lock
 * @property {number} maxDelayMs the spin lock's longest back-off sleep
 */

process.on('disconnect', () => process.exit(2)); // main.mjs is gone

/** @type {WorkerConfig} */
const config = JSON.parse(process.env.SPIN_LOCK_WORKER ?? 'null');
if (!config) throw new Error('worker.mjs is started by main.mjs');

const client = createClient({ redis: config.url, keyPrefix: config.keyPrefix });
client.on('error', (error) => console.error(`[builder ${config.index}] background error:`, error));
const data = new Redis(config.url);

/** Counts one in (KEYS[1]) and keeps the high-water mark (KEYS[2]); returns the count. */
const ENTER = `local v = redis.call('INCR', KEYS[1])
if v > tonumber(redis.call('GET', KEYS[2]) or '0') then redis.call('SET', KEYS[2], v) end
return v`;
/**
 * The fenced report store: accepts a write only if its token is larger than
 * the last one accepted (tokens are decimal integers below 2^53, exact as Lua
 * numbers); returns 1 if accepted, 0 if refused.
 */
const FENCED_WRITE = `local last = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) <= last then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('RPUSH', KEYS[2], ARGV[2])
return 1`;
const key = (/** @type {string} */ name) => `${config.dataPrefix}:${name}`;

const report = client.getSpinLock('report:7', { maxDelayMs: config.maxDelayMs });
let built = 0;
let refusedWrites = 0;
let overlaps = 0;
for (let n = 0; n < config.reports; n++) {
  await data.eval(ENTER, 2, key('waiting'), key('max-waiting'));
  await report.withLock(
    async ({ token }) => {
      await data.decr(key('waiting'));
      if ((await data.eval(ENTER, 2, key('holders'), key('max-holders'))) !== 1) overlaps++;
      try {
        await new Promise((resolve) => setTimeout(resolve, config.buildMs)); // the build
        const accepted = await data.eval(FENCED_WRITE, 2, key('last-token'), key('reports'), String(token), `builder ${config.index} #${n}`);
        if (accepted === 1) built++;
        else refusedWrites++;
      } finally {
        await data.decr(key('holders'));
      }
    },
    { waitMs: 20_000 },
  );
}
await client.close();
await data.quit();
process.send?.({ type: 'done', result: { index: config.index, built, refusedWrites, overlaps } }, () => process.exit(0));
