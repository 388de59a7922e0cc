// @ts-check
/**
 * One trainer process of the GPU-pool example. Role `trainer`: runs JOBS jobs,
 * CONCURRENCY at a time, each on a GPU permit of the pool (a watchdog lease,
 * renewed while the job runs), counts itself in and out of the pool's usage
 * counter, and counts the `jobs` latch down when a job is done. Role `doomed`:
 * takes one GPU, tells main.mjs which, and then hangs until it is SIGKILLed,
 * the way a trainer dies with a GPU in hand. Talks to main.mjs over IPC:
 * → { type: 'holding', id } (doomed), → { type: 'done', result } (trainer).
 */
import { Redis } from 'ioredis';
import { createClient } from '@org/rlock';

/**
 * @typedef {object} WorkerConfig What main.mjs hands each worker (env GPU_POOL_WORKER, JSON).
 * @property {'trainer' | 'doomed'} role
 * @property {number} index
 * @property {string} url
 * @property {string} keyPrefix rlock keyPrefix
 * @property {string} dataPrefix prefix of the example's own keys (usage counter)
 * @property {number} gpus
 * @property {number} jobs
 * @property {number} concurrency
 * @property {number} jobMs
 * @property {number} watchdogTimeoutMs
 */

process.on('disconnect', () => process.exit(2)); // main.mjs is gone

/** @type {WorkerConfig} */
const config = JSON.parse(process.env.GPU_POOL_WORKER ?? 'null');
if (!config) throw new Error('worker.mjs is started by main.mjs');

const client = createClient({ redis: config.url, keyPrefix: config.keyPrefix, watchdogTimeoutMs: config.watchdogTimeoutMs });
client.on('error', (error) => console.error(`[worker ${config.index}] background error:`, error));
const pool = client.getPermitExpirableSemaphore('gpu');

if (config.role === 'doomed') {
  const gpu = await pool.acquire();
  process.send?.({ type: 'holding', id: gpu.id });
  // Hangs with the GPU until main.mjs kills it (the client keeps the process alive).
} else {
  const usage = new Redis(config.url);
  const inUseKey = `${config.dataPrefix}:in-use`;
  const maxKey = `${config.dataPrefix}:max-in-use`;
  // Count in atomically, and keep the high-water mark.
  const ENTER = `local v = redis.call('INCR', KEYS[1])
if v > tonumber(redis.call('GET', KEYS[2]) or '0') then redis.call('SET', KEYS[2], v) end
return v`;
  const jobsDone = client.getCountDownLatch('jobs');

  /** Waits `ms`, or rejects with the signal's reason (a LockLostError) the moment the GPU's lease is lost. */
  const train = (/** @type {number} */ ms, /** @type {AbortSignal} */ signal) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    });

  let next = 0;
  let done = 0;
  /** @type {string[]} */
  const errors = [];
  const lane = async () => {
    while (next < config.jobs) {
      next++;
      try {
        // (TypeScript, or Node ≥ 24: `await using gpu = await pool.acquire(…)` releases it at scope end.)
        const gpu = await pool.acquire({ waitMs: 20_000 });
        try {
          await usage.eval(ENTER, 2, inUseKey, maxKey);
          try {
            await train(config.jobMs, gpu.signal);
          } finally {
            await usage.decr(inUseKey);
          }
        } finally {
          await gpu.release();
        }
        done++;
        await jobsDone.countDown();
      } catch (error) {
        errors.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
      }
    }
  };
  await Promise.all(Array.from({ length: config.concurrency }, lane));
  await client.close();
  await usage.quit();
  process.send?.({ type: 'done', result: { index: config.index, done, errors } }, () => process.exit(0));
}
