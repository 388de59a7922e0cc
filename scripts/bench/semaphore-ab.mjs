/**
 * The peers-semaphore scenario for this checkout and BENCH_RLOCK_BASELINE, in separate processes (in one
 * process the two builds measure alike), alternated round by round after a 1 s warm-up: acquisitions/s,
 * client and Redis CPU, EVALSHA and PUBLISH per acquisition, then the per-round ratios and their median.
 * Usage and settings: scripts/bench/README.md (ROUNDS, SECONDS, PROCESSES; Redis pinned to the other core).
 */
import { fork } from 'node:child_process';
import { Redis } from 'ioredis';

const PERMITS = 8;
const TASKS = 8;
const WARMUP_MS = 1_000;
const builds = {
  this: '@org/rlock',
  baseline: `file://${(process.env.BENCH_RLOCK_BASELINE ?? '').replace(/\/$/, '')}/packages/rlock/dist/esm/index.js`,
};
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6390';

if (process.env.SEMAPHORE_AB_BUILD) {
  const { createClient } = await import(builds[process.env.SEMAPHORE_AB_BUILD]);
  const client = createClient({ redis: url, keyPrefix: 'ab' });
  const side = new Redis(url);
  const semaphore = client.getSemaphore('s');
  let acquisitions = 0;
  let stop = false;
  let violations = 0;
  let cpu0 = process.cpuUsage();
  const tasks = Array.from({ length: TASKS }, async () => {
    while (!stop) {
      await semaphore.acquire();
      if ((await side.incr('inside')) > PERMITS) violations++;
      await side.incr('counter');
      await side.decr('inside');
      await semaphore.release();
      acquisitions++;
    }
  });
  process.on('message', async (message) => {
    if (message === 'mark') {
      // The warm-up is over: count from here.
      acquisitions = 0;
      cpu0 = process.cpuUsage();
      return;
    }
    stop = true;
    await Promise.all(tasks);
    const cpu = process.cpuUsage(cpu0);
    process.send({ acquisitions, cpuMs: (cpu.user + cpu.system) / 1000, violations });
    await client.close();
    side.disconnect();
    process.disconnect();
  });
  process.send('ready');
} else {
  if (!process.env.BENCH_RLOCK_BASELINE) throw new Error('set BENCH_RLOCK_BASELINE to a built checkout');
  const rounds = Number(process.env.ROUNDS ?? 10);
  const seconds = Number(process.env.SECONDS ?? 5);
  const processes = Number(process.env.PROCESSES ?? 4);
  const admin = new Redis(url);
  const redisCpuMs = async () => {
    const info = await admin.info('cpu');
    const read = (name) => Number(info.match(new RegExp(`${name}:([0-9.]+)`))?.[1]);
    return (read('used_cpu_sys') + read('used_cpu_user')) * 1000;
  };
  const results = { this: [], baseline: [] };
  for (let round = 0; round < rounds; round++) {
    for (const build of round % 2 ? ['baseline', 'this'] : ['this', 'baseline']) {
      await admin.flushall();
      const { createClient } = await import(builds[build]);
      const setup = createClient({ redis: url, keyPrefix: 'ab' });
      await setup.getSemaphore('s').trySetPermits(PERMITS);
      await setup.close();
      const workers = Array.from({ length: processes }, () => fork(new URL(import.meta.url).pathname, { env: { ...process.env, SEMAPHORE_AB_BUILD: build } }));
      await Promise.all(workers.map((worker) => new Promise((resolve) => worker.once('message', resolve))));
      await new Promise((resolve) => setTimeout(resolve, WARMUP_MS));
      for (const worker of workers) worker.send('mark');
      await admin.config('RESETSTAT');
      const cpu0 = await redisCpuMs();
      const t0 = performance.now();
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      const reports = workers.map((worker) => new Promise((resolve) => worker.once('message', resolve)));
      for (const worker of workers) worker.send('stop');
      const done = await Promise.all(reports);
      const elapsedS = (performance.now() - t0) / 1000;
      const redisMs = (await redisCpuMs()) - cpu0;
      await Promise.all(workers.map((worker) => new Promise((resolve) => (worker.exitCode !== null ? resolve() : worker.once('close', resolve)))));
      const stats = await admin.info('commandstats');
      const calls = (command) => Number(stats.match(new RegExp(`cmdstat_${command}:calls=(\\d+)`))?.[1] ?? 0);
      const n = done.reduce((sum, report) => sum + report.acquisitions, 0);
      const row = {
        perSecond: Math.round(n / elapsedS),
        clientUs: (done.reduce((sum, report) => sum + report.cpuMs, 0) * 1000) / n,
        redisUs: (redisMs * 1000) / n,
        evalsha: calls('evalsha') / n,
        publish: calls('publish') / n,
        violations: done.reduce((sum, report) => sum + report.violations, 0),
      };
      results[build].push(row);
      console.log(
        `${build.padEnd(8)} ${String(row.perSecond).padStart(6)}/s  client ${row.clientUs.toFixed(1)} µs  redis ${row.redisUs.toFixed(1)} µs  evalsha ${row.evalsha.toFixed(3)}  publish ${row.publish.toFixed(3)}  violations ${row.violations}`,
      );
    }
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const ratios = (field) => results.this.map((row, i) => row[field] / results.baseline[i][field]);
  const throughput = ratios('perSecond');
  console.log(`this ÷ baseline, per round: ${throughput.map((r) => r.toFixed(2)).join(' ')}`);
  console.log(
    `median: acquisitions/s ${median(throughput).toFixed(3)}, client CPU per acquisition ${median(ratios('clientUs')).toFixed(3)}, Redis CPU ${median(ratios('redisUs')).toFixed(3)}`,
  );
  admin.disconnect();
}
