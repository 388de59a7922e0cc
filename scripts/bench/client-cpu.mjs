// @ts-check
/**
 * rlock's own client work per lock + unlock pair, the lock's scripts answered in-process (no socket, no Redis time):
 * client CPU µs per pair (`process.cpuUsage`) and bytes allocated per pair (minor GCs × the 16 MB semi-space).
 * A fresh process per build, task count and round, interleaved. Usage in scripts/bench/README.md.
 */
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { constants as perfConstants, PerformanceObserver } from 'node:perf_hooks';

const SEMI_SPACE_MB = 16;
const WARMUP_MS = 1500;

/** @param {string} root a checkout with built packages */
async function measure(root, tasks, seconds) {
  const require = createRequire(`${root}/packages/core/package.json`);
  const { Redis } = require('ioredis');
  const { SCRIPTS } = await import(pathToFileURL(`${root}/packages/core/dist/esm/objects/scripts.generated.js`).href);
  const { createClient } = await import(pathToFileURL(`${root}/packages/rlock/dist/esm/index.js`).href);
  const acquireSha = SCRIPTS.lockAcquire.sha;
  const releaseSha = SCRIPTS.lockRelease.sha;
  const send = Redis.prototype.sendCommand;
  /** @type {[any, unknown][]} */
  let answers = [];
  let token = 1e15;
  const answer = () => {
    const due = answers;
    answers = [];
    for (const [command, reply] of due) command.resolve(reply);
  };
  // A build that coalesces sends what queued as one batch call (lock/acquireBatch.lua): one reply per item.
  const acquireBatchSha = SCRIPTS.lockAcquireBatch?.sha;
  const releaseBatchSha = SCRIPTS.lockReleaseBatch?.sha;
  Redis.prototype.sendCommand = function (/** @type {any} */ command, /** @type {any} */ stream) {
    const sha = command.name === 'evalsha' ? command.args[0] : undefined;
    /** @type {unknown} */
    let reply;
    if (sha === acquireSha) reply = [1, String(++token), 1];
    else if (sha === releaseSha) reply = [1, 0, 0];
    else if (sha === acquireBatchSha) reply = Array.from({ length: Number(command.args[1]) / 4 }, () => String(++token));
    else if (sha === releaseBatchSha) reply = Array.from({ length: Number(command.args[1]) / 3 }, () => 0);
    else return send.call(this, command, stream);
    if (answers.length === 0) setImmediate(answer);
    answers.push([command, reply]);
    return command.promise;
  };

  const client = createClient({ redis: process.env.REDIS_URL, keyPrefix: `client-cpu:${process.pid}` });
  const holder = (/** @type {string} */ key) => {
    const lock = client.getLock(key);
    return { lock: () => lock.lock({ leaseMs: 10_000 }), unlock: () => lock.unlock() };
  };
  const warm = holder('warm');
  await client.task(async () => {
    await warm.lock();
    await warm.unlock();
  });
  let pairs = 0;
  let minorGcs = 0;
  let inWindow = false;
  /** @type {NodeJS.CpuUsage | undefined} */
  let cpuAtStart;
  /** @type {NodeJS.CpuUsage | undefined} */
  let cpu;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (inWindow && /** @type {any} */ (entry).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) minorGcs++;
    }
  }).observe({ entryTypes: ['gc'] });
  const end = performance.now() + WARMUP_MS + seconds * 1000;
  setTimeout(() => {
    cpuAtStart = process.cpuUsage();
    pairs = 0;
    inWindow = true;
  }, WARMUP_MS);
  setTimeout(
    () => {
      cpu = process.cpuUsage(cpuAtStart);
      inWindow = false;
    },
    WARMUP_MS + seconds * 1000,
  );
  await Promise.all(
    Array.from({ length: tasks }, (_, index) =>
      client.task(async () => {
        const pair = holder(`k${index}`);
        while (performance.now() < end) {
          await pair.lock();
          await pair.unlock();
          if (inWindow) pairs++;
        }
      }),
    ),
  );
  cpu ??= process.cpuUsage(cpuAtStart);
  Redis.prototype.sendCommand = send;
  await client.close();
  return { cpuUsPerPair: (cpu.user + cpu.system) / pairs, bytesPerPair: (minorGcs * SEMI_SPACE_MB * 2 ** 20) / pairs, pairs };
}

if (process.env.CLIENT_CPU_ROOT) {
  const result = await measure(process.env.CLIENT_CPU_ROOT, Number(process.env.CLIENT_CPU_TASKS), Number(process.env.CLIENT_CPU_SECONDS));
  process.send?.(result);
  process.exit(0);
}

if (!process.env.REDIS_URL) throw new Error('REDIS_URL is required (a server for the handshake; the lock scripts are answered in-process)');
const here = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
/** @type {Record<string, string>} */
const builds = { rlock: here };
if (process.env.BENCH_RLOCK_BASELINE) builds.baseline = process.env.BENCH_RLOCK_BASELINE.replace(/\/$/, '');
const taskCounts = (process.env.TASKS ?? '1,8').split(',').map(Number);
const rounds = Number(process.env.ROUNDS ?? 5);
const seconds = Number(process.env.SECONDS ?? 3);

/** @type {Map<string, { cpu: number[], bytes: number[] }>} */
const results = new Map();
for (let round = 1; round <= rounds; round++) {
  for (const tasks of taskCounts) {
    for (const [build, root] of Object.entries(builds)) {
      const child = fork(fileURLToPath(import.meta.url), {
        env: { ...process.env, CLIENT_CPU_ROOT: root, CLIENT_CPU_TASKS: String(tasks), CLIENT_CPU_SECONDS: String(seconds) },
        execArgv: [`--min-semi-space-size=${SEMI_SPACE_MB}`, `--max-semi-space-size=${SEMI_SPACE_MB}`],
      });
      const result = await new Promise((resolve, reject) => {
        child.once('message', resolve);
        child.once('exit', (code) => reject(new Error(`${build} at ${tasks} tasks exited with ${code}`)));
      });
      const key = `${build}\t${tasks}`;
      const row = results.get(key) ?? { cpu: [], bytes: [] };
      row.cpu.push(/** @type {any} */ (result).cpuUsPerPair);
      row.bytes.push(/** @type {any} */ (result).bytesPerPair);
      results.set(key, row);
      process.stderr.write(`[client-cpu] round ${round}/${rounds} ${build} ${tasks} tasks: ${JSON.stringify(result)}\n`);
    }
  }
}

const median = (/** @type {number[]} */ values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
console.log('| build | tasks | client CPU µs/pair (median; rounds) | bytes allocated/pair (median) |');
console.log('| --- | ---: | --- | ---: |');
for (const [key, row] of results) {
  const [build, tasks] = key.split('\t');
  const cpu = median(row.cpu);
  console.log(`| ${build} | ${tasks} | ${cpu.toFixed(2)} (${row.cpu.map((value) => value.toFixed(2)).join(', ')}) | ${Math.round(median(row.bytes))} |`);
}
