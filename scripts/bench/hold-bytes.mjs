/**
 * Redis bytes per held lock: MEMORY USAGE of a lock key as this checkout's rlock (or BENCH_RLOCK_BASELINE's
 * build) writes it, beside a raw `SET key <22 random characters> NX PX`, and used_memory per hold over HOLDS
 * held names. Holds are taken through the public API with default ids and prefix, on REDIS_URL, a scratch
 * server it FLUSHALLs: never point it at a server you did not start for it.
 * Usage: REDIS_URL=redis://127.0.0.1:<port> [BENCH_RLOCK_BASELINE=/path/to/checkout] node scripts/bench/hold-bytes.mjs
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

const url = process.env.REDIS_URL;
if (!url) throw new Error('REDIS_URL: a scratch Redis this script may FLUSHALL');
const HOLDS = Number(process.env.HOLDS ?? 10_000);
const LEASE_MS = 60_000;
const baseline = process.env.BENCH_RLOCK_BASELINE?.replace(/\/$/, '');
const core = baseline ? `file://${baseline}/packages/core/dist/esm/index.js` : new URL('../../packages/core/dist/esm/index.js', import.meta.url).href;
const { RLockClient, LAYOUT_VERSION } = await import(core);

const redis = new Redis(url);
const client = new RLockClient({ redis: url });
const usage = async (key) => Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
// Read once the server's cron has finished rehashing the key space (both tables count while it runs).
const settled = () => new Promise((resolve) => setTimeout(resolve, 1_000));
const usedMemory = async () => {
  await settled();
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
};
const random22 = () => randomBytes(16).toString('base64url').slice(0, 22);
const rows = [];

await redis.flushall();
await redis.set('rlock:{order:12345}', random22(), 'NX', 'PX', LEASE_MS);
rows.push(['raw SET NX PX, 22-character value', await usage('rlock:{order:12345}')]);
await redis.flushall();

await client.task(async () => {
  const lock = client.getLock('order:12345');
  await lock.lock({ leaseMs: LEASE_MS });
  rows.push(['lock, count 1', await usage('rlock:{order:12345}')]);
  await lock.lock({ leaseMs: LEASE_MS });
  rows.push(['lock, reentered (count 2)', await usage('rlock:{order:12345}')]);
  const once = client.getNonReentrantLock('job:12345');
  await once.lock({ leaseMs: LEASE_MS });
  rows.push(['non-reentrant lock', await usage('rlock:{job:12345}')]);
  const fair = client.getFairLock('payout:12345');
  await fair.lock({ leaseMs: LEASE_MS });
  rows.push(['fair lock, nobody queued', await usage('rlock:{payout:12345}')]);
  await Promise.all([lock.unlock(), fair.unlock(), once.unlock()]);
  await lock.unlock();
});

// Many holds: the lock keys with their expiry entries, and the slots' fence counters (at most 16,384).
await redis.flushall();
let before = await usedMemory();
for (let i = 0; i < HOLDS; i += 500) {
  await Promise.all(Array.from({ length: Math.min(500, HOLDS - i) }, (_, j) => redis.set(`rlock:{order:${i + j}}`, random22(), 'NX', 'PX', LEASE_MS)));
}
const rawPerHold = ((await usedMemory()) - before) / HOLDS;
await redis.flushall();
before = await usedMemory();
for (let i = 0; i < HOLDS; i += 500) {
  await Promise.all(Array.from({ length: Math.min(500, HOLDS - i) }, (_, j) => client.getLock(`order:${i + j}`).acquire({ leaseMs: LEASE_MS })));
}
const lockPerHold = ((await usedMemory()) - before) / HOLDS;
const fences = await redis.keys('rlock:*:fence');
before = await usedMemory();
await redis.del(...fences);
const fenceBytes = before - (await usedMemory());

console.log(`layout ${LAYOUT_VERSION}${baseline ? ` (${baseline})` : ''}; MEMORY USAGE … SAMPLES 0, key rlock:{<name>:12345}`);
for (const [what, bytes] of rows) console.log(`  ${what.padEnd(36)} ${bytes} B`);
console.log(
  `used_memory per hold over ${HOLDS} names: raw ${rawPerHold.toFixed(1)} B, lock ${lockPerHold.toFixed(1)} B, ` +
    `of which ${(fenceBytes / HOLDS).toFixed(1)} B the slots' ${fences.length} fence counters`,
);
await client.close();
await redis.flushall();
redis.disconnect();
