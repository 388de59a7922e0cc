// @ts-check
/**
 * Redis instructions per S1 pair (BENCH_INSTR_TASKS tasks on as many keys, 64 by default) under callgrind: a figure the machine's load does not move.
 * Usage in scripts/bench/README.md; needs valgrind.
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';

const TASKS = Number(process.env.BENCH_INSTR_TASKS ?? 64);
const WARM = Number(process.env.BENCH_INSTR_WARM ?? 512);
const PAIRS = Number(process.env.BENCH_INSTR_PAIRS ?? 2048);
const LEASE_MS = 10_000;

/** @returns {Promise<number>} */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Zeroes the callgrind-run server's counters. @param {number} pid */
function zero(pid) {
  execFileSync('callgrind_control', ['-z', String(pid)], { stdio: 'ignore' });
}

/** Instructions since the last zero: a dump (its own file) read back. @param {string} dir @param {number} pid */
function instructionsSinceZero(dir, pid) {
  execFileSync('callgrind_control', ['-d', String(pid)], { stdio: 'ignore' });
  // Each dump is a file of its own, `callgrind.out.<pid>.<n>`: the last one holds what ran since the zero.
  const part = (/** @type {string} */ f) => Number(/\.(\d+)$/.exec(f.slice(`callgrind.out.${pid}`.length))?.[1] ?? 0);
  const dumps = readdirSync(dir)
    .filter((f) => f.startsWith(`callgrind.out.${pid}.`))
    .sort((a, b) => part(a) - part(b));
  const last = dumps.at(-1);
  if (!last) throw new Error('callgrind wrote no dump');
  const text = readFileSync(join(dir, last), 'utf8');
  const total = /^(?:summary|totals):\s+(\d+)/m.exec(text);
  if (!total) throw new Error('no totals in the dump');
  return Number(total[1]);
}

/**
 * @typedef {{ lock(): Promise<void>, unlock(): Promise<void> }} Holder
 * @typedef {{ holder(key: string): Holder, task<T>(fn: () => Promise<T>): Promise<T>, close(): Promise<void> }} Driver
 */

/** @param {string} url @returns {Promise<Driver>} */
async function raw(url) {
  const redis = new Redis(url);
  const release = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
  const sha = /** @type {string} */ (await redis.script('LOAD', release));
  return {
    holder(key) {
      let token = '';
      return {
        async lock() {
          token = Math.random().toString(36).slice(2, 14).padEnd(12, '0') + Math.random().toString(36).slice(2, 12);
          while ((await redis.set(key, token, 'PX', LEASE_MS, 'NX')) !== 'OK');
        },
        async unlock() {
          await redis.evalsha(sha, 1, key, token);
        },
      };
    },
    task: (fn) => fn(),
    close: async () => void redis.disconnect(),
  };
}

/** @param {string} entry @returns {(url: string) => Promise<Driver>} */
function rlock(entry) {
  return async (url) => {
    const { createClient } = await import(entry);
    const client = createClient({ redis: url, keyPrefix: 'instr' });
    return {
      holder(key) {
        const lock = client.getLock(key);
        return { lock: () => lock.lock({ leaseMs: LEASE_MS }).then(() => undefined), unlock: () => lock.unlock().then(() => undefined) };
      },
      task: (fn) => client.task(fn),
      close: () => client.close(),
    };
  };
}

/** Runs `pairs` pairs over TASKS tasks. @param {Driver} driver @param {Holder[]} holders @param {number} pairs */
async function runPairs(driver, holders, pairs) {
  let left = pairs;
  await Promise.all(
    holders.map((holder) =>
      driver.task(async () => {
        while (left > 0) {
          left--;
          await holder.lock();
          await holder.unlock();
        }
      }),
    ),
  );
}

/** @param {string} name @param {(url: string) => Promise<Driver>} makeDriver */
async function measure(name, makeDriver) {
  const dir = mkdtempSync(join(tmpdir(), 'rlock-instr-'));
  const port = await freePort();
  const server = spawn(
    'valgrind',
    ['--tool=callgrind', `--callgrind-out-file=${join(dir, 'callgrind.out.%p')}`, 'redis-server', '--port', String(port), '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore', cwd: dir },
  );
  try {
    const url = `redis://127.0.0.1:${port}`;
    const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    probe.on('error', () => undefined);
    for (let i = 0; i < 300; i++) {
      try {
        await probe.connect();
        break;
      } catch {
        await sleep(200);
      }
    }
    await probe.ping();
    probe.disconnect();
    const driver = await makeDriver(url);
    const holders = Array.from({ length: TASKS }, (_, i) => driver.holder(`k${i}`));
    await runPairs(driver, holders, WARM);
    zero(/** @type {number} */ (server.pid));
    await runPairs(driver, holders, PAIRS);
    const counted = instructionsSinceZero(dir, /** @type {number} */ (server.pid));
    await driver.close();
    console.log(`| ${name} | ${(counted / PAIRS / 1000).toFixed(1)}k |`);
  } finally {
    server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`Redis instructions per S1 pair (callgrind; ${TASKS} tasks on ${TASKS} keys; ${PAIRS} pairs counted after ${WARM})\n`);
console.log('| pair | Redis instructions |');
console.log('| --- | --- |');
await measure('raw: `SET NX PX`, then `EVALSHA` GET + DEL', raw);
await measure('rlock, this checkout', rlock(new URL('../../packages/rlock/dist/esm/index.js', import.meta.url).href));
const baseline = process.env.BENCH_RLOCK_BASELINE;
if (baseline) await measure(`rlock, ${baseline}`, rlock(new URL(`file://${baseline.replace(/\/$/, '')}/packages/rlock/dist/esm/index.js`).href));
