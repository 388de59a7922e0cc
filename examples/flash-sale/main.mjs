// @ts-check
/**
 * Flash sale: WORKERS processes × TASKS concurrent buyers sell ITEMS items of
 * STOCK units each. Stock lives in Redis and is decremented with a plain
 * GET-then-SET, so only the per-item lock keeps it from being oversold. The
 * services reenter the lock in nested calls (see services.mjs).
 *
 *   npm run demo
 *   WORKERS=2 TASKS=16 ITEMS=5 STOCK=200 npm run demo
 *   REDIS_URL=redis://127.0.0.1:6390 npm run demo   # an existing server; only its own keys are touched
 *   REDIS_CLUSTER=127.0.0.1:7101,127.0.0.1:7102 npm run demo      # a Redis Cluster (docker compose --profile cluster)
 *   REDIS_SENTINELS=127.0.0.1:26380 npm run demo                # a Sentinel group (docker compose --profile sentinel)
 *   UNSAFE=1 npm run demo                           # no locks: watch it oversell (exits 1)
 *
 * Exit code 0 when every unit was sold exactly once, 1 otherwise.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { RedisFleet } from '@org/rlock-testing';
import { ShopKeys } from './services.mjs';
import { externalTarget, targetFromEnv } from './target.mjs';

/**
 * @typedef {object} WorkerConfig What main.mjs hands each worker (env FLASH_SALE_WORKER, JSON).
 * @property {number} index
 * @property {string} [url] the demo's own server (when no target is named in the environment)
 * @property {string} lockPrefix rlock keyPrefix
 * @property {string} dataPrefix prefix of the shop's own keys
 * @property {number} items
 * @property {number} tasks
 * @property {boolean} unsafe
 */

/**
 * @typedef {object} WorkerResult What each worker reports when it has seen every item sold out.
 * @property {number} index
 * @property {number} sold units this worker sold
 * @property {number} purchases purchase calls, including those that found the item sold out
 * @property {Record<string, number>} soldPerItem
 * @property {number} negativeStockSeen stock values below zero read by this worker
 * @property {number} sellingMs
 * @property {string} [error]
 */

/** @param {string} name @param {number} fallback */
function intFromEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return value;
}

const options = {
  workers: intFromEnv('WORKERS', 4),
  tasks: intFromEnv('TASKS', 8),
  items: intFromEnv('ITEMS', 20),
  stock: intFromEnv('STOCK', 50),
  /** The whole sale must finish within this; a hung lock fails the demo instead of hanging it. */
  timeoutMs: intFromEnv('TIMEOUT_MS', 120_000),
  unsafe: process.env.UNSAFE === '1',
};

const wallStart = performance.now();
const runId = randomBytes(6).toString('hex');
const lockPrefix = `flash-sale-${runId}`;
// The shop's keys share a hash tag: on a Cluster its MULTI stays in one slot.
const keys = new ShopKeys(`flash-sale-${runId}-{shop}`);

/** @type {RedisFleet | undefined} */
let fleet;
/** @type {import('ioredis').Redis | import('ioredis').Cluster | undefined} */
let redis;
/** @type {import('./target.mjs').Target | undefined} */
let target;
/** @type {import('node:child_process').ChildProcess[]} */
const children = [];
let cleanedUp = false;

/** Deletes this run's keys on a server we do not own (SCAN, never FLUSH). */
async function deleteRunKeys(/** @type {import('ioredis').Redis | import('ioredis').Cluster} */ connection) {
  let deleted = 0;
  for (const node of target?.scanNodes(connection) ?? []) {
    for (const pattern of [`${lockPrefix}*`, `${keys.prefix}*`]) {
      let cursor = '0';
      do {
        const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        // One key at a time: on a Cluster the keys may sit in different slots.
        for (const key of found) deleted += await node.del(key);
      } while (cursor !== '0');
    }
  }
  return deleted;
}

async function cleanUp() {
  if (cleanedUp) return;
  cleanedUp = true;
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (redis) {
    try {
      if (!fleet) await deleteRunKeys(redis);
    } finally {
      await redis.quit().catch(() => redis?.disconnect());
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
 * Forks one worker; resolves with its result once it has reported and exited cleanly.
 * @param {WorkerConfig} config
 * @param {Promise<void>} startGate resolves when every worker is ready
 * @param {(index: number) => void} onReady
 * @returns {Promise<WorkerResult>}
 */
function runWorker(config, startGate, onReady) {
  const child = fork(fileURLToPath(new URL('./worker.mjs', import.meta.url)), [], {
    env: { ...process.env, FLASH_SALE_WORKER: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    /** @type {WorkerResult | undefined} */
    let result;
    child.on('message', (/** @type {any} */ message) => {
      if (message?.type === 'ready') {
        onReady(config.index);
        startGate.then(() => child.send({ type: 'start' }));
      } else if (message?.type === 'done') {
        result = message.result;
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (result && code === 0) resolve(result);
      else
        reject(
          new Error(`worker ${config.index} exited with ${signal ?? `code ${code}`}${result?.error ? `: ${result.error}` : result ? '' : ' before reporting'}`),
        );
    });
  });
}

/** @param {number} n */
const fmt = (n) => n.toLocaleString('en-US', { maximumFractionDigits: 1 });

async function main() {
  let url;
  if (!externalTarget()) {
    fleet = await RedisFleet.start({ size: 1 });
    url = fleet.url(0);
  }
  target = /** @type {import('./target.mjs').Target} */ (targetFromEnv(url));
  redis = target.connect();
  const totalStock = options.items * options.stock;

  // Seed the stock.
  const seed = redis.multi();
  for (let item = 0; item < options.items; item++) seed.set(keys.stock(item), String(options.stock));
  seed.del(keys.orders());
  await seed.exec();

  console.log(
    `Flash sale: ${options.items} items × ${options.stock} units = ${totalStock} units, ` +
      `${options.workers} processes × ${options.tasks} tasks` +
      `${options.unsafe ? ' — UNSAFE: no locks' : ''}\n` +
      `Redis: ${target.label}${fleet ? '' : `, keys ${lockPrefix}*`}; ` +
      `${cpus().length} cores, Node ${process.version}`,
  );

  /** @type {() => void} */
  let openGate = () => {};
  /** @type {Promise<void>} */
  const startGate = new Promise((resolve) => (openGate = resolve));
  let ready = 0;
  let sellingStart = 0;
  const onReady = () => {
    if (++ready === options.workers) {
      sellingStart = performance.now();
      openGate();
    }
  };

  const all = Promise.all(
    Array.from({ length: options.workers }, (_, index) =>
      runWorker({ index, url, lockPrefix, dataPrefix: keys.prefix, items: options.items, tasks: options.tasks, unsafe: options.unsafe }, startGate, onReady),
    ),
  );
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`sale did not finish within ${options.timeoutMs} ms`)), options.timeoutMs);
  });
  const results = /** @type {WorkerResult[]} */ (await Promise.race([all, timeout]).finally(() => clearTimeout(timer)));
  const sellingMs = performance.now() - sellingStart;

  // What the workers say they sold, and what Redis holds.
  const sold = results.reduce((sum, r) => sum + r.sold, 0);
  const stockLeft = (await redis.mget(...Array.from({ length: options.items }, (_, i) => keys.stock(i)))).map(Number);
  const ledger = await redis.hgetall(keys.orders());
  let oversold = 0;
  let negativeStock = 0;
  let lostUpdates = 0;
  for (let item = 0; item < options.items; item++) {
    const soldOfItem = results.reduce((sum, r) => sum + (r.soldPerItem[item] ?? 0), 0);
    const left = /** @type {number} */ (stockLeft[item]);
    oversold += Math.max(0, soldOfItem - options.stock); // more sales than units
    if (left < 0) negativeStock += -left;
    // Every sale must have taken exactly one unit out of stock.
    lostUpdates += Math.abs(soldOfItem - (options.stock - left));
    if (Number(ledger[item] ?? 0) !== soldOfItem) lostUpdates += Math.abs(Number(ledger[item] ?? 0) - soldOfItem);
  }
  negativeStock += results.reduce((sum, r) => sum + r.negativeStockSeen, 0);

  console.log('\nPer process:');
  console.log('| process | sold | purchase calls | selling time |');
  console.log('| ---: | ---: | ---: | ---: |');
  for (const r of results) console.log(`| ${r.index} | ${r.sold} | ${r.purchases} | ${fmt(r.sellingMs)} ms |`);

  const ok = oversold === 0 && negativeStock === 0 && lostUpdates === 0 && sold === totalStock;
  console.log(
    `\nitems sold:    ${sold} / ${totalStock}` +
      `\noversold:      ${oversold}` +
      `\nnegative stock: ${negativeStock}` +
      `\nlost updates:  ${lostUpdates}  (sales that did not take exactly one unit out of stock)` +
      `\nthroughput:    ${fmt(sold / (sellingMs / 1000))} sales/s (each sale: ${options.unsafe ? 'GET + SET + HINCRBY, no locks' : 'lock, nested lock, GET, SET, HINCRBY, 2 unlocks'})` +
      `\nselling time:  ${fmt(sellingMs)} ms` +
      `\nwall time:     ${fmt(performance.now() - wallStart)} ms (with Redis and process start-up)` +
      `\n\n${ok ? 'OK: every unit sold exactly once' : 'FAILED: the stock was not sold exactly once'}`,
  );
  return ok;
}

let exitCode = 1;
try {
  exitCode = (await main()) ? 0 : 1;
} catch (error) {
  console.error('flash-sale failed:', error);
} finally {
  await cleanUp();
}
process.exit(exitCode);
