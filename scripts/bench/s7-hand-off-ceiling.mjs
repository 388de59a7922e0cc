// @ts-check
/**
 * s7 — what a FIFO hand-off between processes can reach on this machine. Three
 * rows, one sitting, each with S2's critical section on its own connection
 * (`SET inside 1 NX`, `INCR counter`, `DEL inside`):
 *
 * - a token ring: 4 processes, no lock at all; the process holding the token
 *   runs the critical section, then PUBLISHes the token to the next process's
 *   channel. Every hand-off crosses processes, with one command and one
 *   message: no lock can hand over between processes for less, so this is
 *   the ceiling for hand-offs that cross;
 * - the fair lock with S2's 4 processes × 8 tasks;
 * - the fair lock with the same 32 tasks in ONE process (hand-offs that never
 *   wake another process).
 *
 * Knobs: `BENCH_RLOCK_BASELINE=<checkout>` adds the fair lock 4 × 8 from that
 * checkout's build (its `npm run build`), run beside this one in every round;
 * `BENCH_ROUNDS` repeats the rows interleaved (medians, and each round's ratio
 * to the ring of the same round); `BENCH_S7_ROWS=ring4,fair4` runs only the
 * rows named (ring4, ring1, fair4, fair1, base4), in that order; `BENCH_S7_PROF=<dir>` runs
 * the workers with `--cpu-prof` into that directory.
 *
 * The same file is the child process (argument `child`), as in s2.
 */
import { fork } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { markdownTable, num, pct } from './table.mjs';
import { median } from './stats.mjs';
import { snapshot, usageBetween } from './server-stats.mjs';

export const id = 's7';
export const title = 's7 (rlock only) — the ceiling of a FIFO hand-off between processes: a lock-free token ring beside the fair lock';

const RING = 4;
const LEASE_MS = 10_000;

/** @typedef {{ mode: 'ring' | 'fair', url: string, keyPrefix: string, index: number, processes: number, tasks: number, warmupMs: number, durationMs: number, entry: string }} ChildConfig */

const BASELINE = process.env.BENCH_RLOCK_BASELINE;

/**
 * @param {Redis} side @param {string} prefix
 * @returns {Promise<{ entered: boolean, turn: number }>} entered: false on a violation; turn: the counter after this hand-off,
 *   which numbers every hand-off of the row in the order they happened
 */
async function criticalSection(side, prefix) {
  const entered = (await side.set(`${prefix}:inside`, '1', 'NX')) === 'OK';
  const turn = await side.incr(`${prefix}:counter`);
  await side.del(`${prefix}:inside`);
  return { entered, turn };
}

/** @param {ChildConfig} config */
async function child(config) {
  const side = new Redis(config.url);
  let counting = false;
  /** @type {number[]} the turns (see criticalSection) of this process's hand-offs inside the window */
  const turns = [];
  /** @type {NodeJS.CpuUsage | undefined} */
  let cpuAtStart;
  /** @type {NodeJS.CpuUsage | undefined} */
  let cpuInWindow;
  const startWindow = () => {
    counting = true;
    cpuAtStart = process.cpuUsage();
  };
  const endWindow = () => {
    cpuInWindow = process.cpuUsage(cpuAtStart);
  };
  /** Hand-offs in each second since go, warm-up included: how fast the code warms up. */
  const perSecond = [];
  let startedAt = 0;
  const tally = () => {
    const second = Math.floor((performance.now() - startedAt) / 1000);
    perSecond[second] = (perSecond[second] ?? 0) + 1;
  };
  let violations = 0;
  /** @type {() => void} */
  let stop = () => undefined;
  const stopped = new Promise((resolve) => (stop = () => resolve(undefined)));
  if (config.mode === 'ring') {
    const sub = new Redis(config.url);
    const pub = new Redis(config.url);
    let ended = false;
    /** @type {Promise<unknown>} the hand-off in progress here: closed connections wait for it */
    let holding = Promise.resolve();
    sub.on('message', () => {
      if (ended) return;
      holding = (async () => {
        const { entered, turn } = await criticalSection(side, config.keyPrefix);
        if (!entered) violations++;
        if (counting && !ended) turns.push(turn);
        if (!ended) tally();
        await pub.publish(`${config.keyPrefix}:ring:${(config.index + 1) % config.processes}`, 'token');
      })();
    });
    await sub.subscribe(`${config.keyPrefix}:ring:${config.index}`);
    process.send?.({ ready: true });
    await new Promise((resolve) => process.once('message', resolve)); // go
    startedAt = performance.now();
    if (config.index === 0) await pub.publish(`${config.keyPrefix}:ring:0`, 'token');
    setTimeout(startWindow, config.warmupMs);
    setTimeout(() => ((ended = true), endWindow(), stop()), config.warmupMs + config.durationMs);
    await stopped;
    await holding;
    await Promise.all([sub.quit(), pub.quit()]);
  } else {
    /** @type {typeof import('@org/rlock')} */
    const { createClient } = await import(config.entry);
    const client = createClient({ redis: config.url, keyPrefix: config.keyPrefix });
    const lock = client.getFairLock('s7');
    process.send?.({ ready: true });
    await new Promise((resolve) => process.once('message', resolve)); // go
    startedAt = performance.now();
    let ended = false;
    setTimeout(startWindow, config.warmupMs);
    setTimeout(() => ((ended = true), endWindow()), config.warmupMs + config.durationMs);
    await Promise.all(
      Array.from({ length: config.tasks }, () =>
        client.task(async () => {
          while (!ended) {
            await lock.lock({ leaseMs: LEASE_MS });
            const { entered, turn } = await criticalSection(side, config.keyPrefix);
            if (!entered) violations++;
            if (counting && !ended) turns.push(turn);
            if (!ended) tally();
            await lock.unlock();
          }
        }),
      ),
    );
    await client.close();
  }
  await side.quit();
  const cpuMs = cpuInWindow ? (cpuInWindow.user + cpuInWindow.system) / 1000 : 0;
  process.send?.({ turns, cpuMs, violations, perSecond: Array.from(perSecond, (n) => n ?? 0) });
  process.exit(0);
}

/**
 * @param {import('./run.mjs').BenchContext} ctx
 * @param {ChildConfig['mode']} mode @param {number} processes @param {number} tasks @param {string} keyPrefix @param {string} entry
 */
async function row(ctx, mode, processes, tasks, keyPrefix, entry) {
  const prof = process.env.BENCH_S7_PROF;
  const children = Array.from({ length: processes }, (_, index) => {
    /** @type {ChildConfig} */
    const config = { mode, url: ctx.url, keyPrefix, index, processes, tasks, warmupMs: ctx.warmupMs, durationMs: ctx.durationMs, entry };
    return fork(fileURLToPath(import.meta.url), ['child'], {
      env: { ...process.env, RLOCK_BENCH_S7: JSON.stringify(config) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [],
    });
  });
  try {
    const messages = children.map((c) => {
      /** @type {unknown[]} */
      const seen = [];
      /** @type {((m: any) => void)[]} */
      const waiting = [];
      c.on('message', (m) => (waiting.shift() ?? ((x) => seen.push(x)))(m));
      return () => new Promise((resolve) => (seen.length ? resolve(seen.shift()) : waiting.push(resolve)));
    });
    await Promise.all(messages.map((next) => next()));
    for (const c of children) c.send('go');
    const admin = new Redis(ctx.url);
    await sleep(ctx.warmupMs);
    const before = await snapshot(admin);
    await sleep(ctx.durationMs);
    const after = await snapshot(admin);
    await admin.quit();
    /** @type {{ turns: number[], cpuMs: number, violations: number, perSecond: number[] }[]} */
    const reports = /** @type {any} */ (await Promise.all(messages.map((next) => next())));
    const count = reports.reduce((sum, r) => sum + r.turns.length, 0);
    // Which process had each turn: consecutive turns in different processes are hand-offs that woke another process.
    /** @type {Map<number, number>} */
    const processOf = new Map();
    reports.forEach((r, index) => r.turns.forEach((turn) => processOf.set(turn, index)));
    let consecutive = 0;
    let crossed = 0;
    for (const [turn, index] of processOf) {
      const next = processOf.get(turn + 1);
      if (next === undefined) continue;
      consecutive++;
      if (next !== index) crossed++;
    }
    const usage = usageBetween(before, after);
    // Whole seconds only: the last one is cut by the end of the window.
    const seconds = Math.floor((ctx.warmupMs + ctx.durationMs) / 1000);
    const curve = Array.from({ length: seconds }, (_, second) => reports.reduce((sum, r) => sum + (r.perSecond[second] ?? 0), 0));
    return {
      perSecond: count / (ctx.durationMs / 1000),
      crossedShare: consecutive ? crossed / consecutive : 0,
      clientCpuUs: count ? (reports.reduce((sum, r) => sum + r.cpuMs, 0) * 1000) / count : 0,
      serverCpuUs: count ? (usage.serverCpu * usage.elapsedMs * 1000) / count : 0,
      scripts: count ? (usage.calls.evalsha ?? 0) / count : 0,
      // Every command the server ran (a script's own commands included), less the snapshots' few.
      commands: count ? Object.entries(usage.calls).reduce((sum, [name, n]) => sum + (name === 'info' ? 0 : n), 0) / count : 0,
      violations: reports.reduce((sum, r) => sum + r.violations, 0),
      curve,
    };
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
}

/** @param {import('./run.mjs').BenchContext} ctx */
export async function run(ctx) {
  const own = '@org/rlock';
  const baseline = BASELINE ? `file://${BASELINE.replace(/\/$/, '')}/packages/rlock/dist/esm/index.js` : undefined;
  /** @type {[id: string, label: string, mode: ChildConfig['mode'], processes: number, tasks: number, entry: string][]} */
  const all = [
    ['ring4', `token ring, ${RING} processes, no lock`, 'ring', RING, 1, own],
    ['ring1', 'token ring, 1 process, no lock', 'ring', 1, 1, own],
    ['fair4', 'fair lock, 4 processes × 8 tasks (S2)', 'fair', 4, 8, own],
    ['fair1', 'fair lock, 1 process × 32 tasks', 'fair', 1, 32, own],
  ];
  if (baseline) all.push(['base4', `fair lock, 4 processes × 8 tasks, baseline build (${BASELINE})`, 'fair', 4, 8, baseline]);
  const only = process.env.BENCH_S7_ROWS?.split(',');
  // In the order named: rows can be alternated between sittings.
  const chosen = only ? only.flatMap((name) => all.filter(([id]) => id === name)) : all;
  /** @type {Map<string, Awaited<ReturnType<typeof row>>[]>} */
  const results = new Map(chosen.map(([id]) => [id, []]));
  for (let round = 0; round < ctx.rounds; round++) {
    for (const [id, label, mode, processes, tasks, entry] of chosen) {
      ctx.log(`s7 round ${round + 1}/${ctx.rounds}: ${label}`);
      results.get(id)?.push(await row(ctx, mode, processes, tasks, `${ctx.keyPrefix}-s7-${id}-${round}`, entry));
    }
  }
  const ring = results.get('ring4');
  const rows = chosen.map(([id, label]) => {
    const runs = results.get(id) ?? [];
    const mid = (/** @type {(r: (typeof runs)[number]) => number} */ pick) => median(runs.map(pick));
    // Each round's rate over the ring's in the same round: the machine's load moves both.
    const ratios = ring ? runs.map((r, i) => r.perSecond / (ring[i]?.perSecond ?? Number.NaN)) : [];
    return [
      label,
      runs.map((r) => num(r.perSecond)).join(' · '),
      ratios.length ? ratios.map((r) => num(r, 2)).join(' · ') : '–',
      pct(mid((r) => r.crossedShare)),
      num(mid((r) => r.clientCpuUs)),
      num(mid((r) => r.serverCpuUs)),
      num(
        mid((r) => r.scripts),
        1,
      ),
      num(
        mid((r) => r.commands),
        1,
      ),
      String(runs.reduce((sum, r) => sum + r.violations, 0)),
      runs[runs.length - 1]?.curve.map((n) => num(n)).join(' · ') ?? '',
    ];
  });
  return [
    markdownTable(
      [
        'row',
        'hand-offs/s (each round)',
        '× the 4-process ring (same round)',
        'between processes',
        'client CPU µs/hand-off',
        'redis CPU µs/hand-off',
        'scripts/hand-off',
        'redis commands/hand-off',
        'violations',
        'hand-offs in each second from the start, warm-up included (last round)',
      ],
      rows,
      'lrrrrrrrrl',
    ),
    '',
    `Each hand-off runs S2's critical section (\`SET inside 1 NX\`, \`INCR counter\`, \`DEL inside\`) on its own connection; ${ctx.warmupMs} ms warm-up, ` +
      `${ctx.durationMs} ms measured. A token ring passes a token with one PUBLISH and no lock: with ${RING} processes every hand-off wakes another ` +
      'process, so it is the ceiling here for any hand-off between processes; with 1 process the token comes back to the same one, the ceiling ' +
      'for a hand-off by message that wakes no other process. "Between processes" is the share of consecutive hand-offs (by the counter\'s ' +
      'value) that went to another process: a fair lock serves its queue in arrival order, so how often it crosses depends on how the ' +
      "processes' tasks queued, not on the lock. CPU columns: the workers' CPU (user + system, all of them) and redis-server's over the " +
      "window, per hand-off (medians over the rounds); redis commands count a script's own commands and the critical section's 3; a fair lock hand-off costs two scripts (the next try, which queues, and the release, which grants the head) " +
      'where the ring sends one PUBLISH. The last column shows how the rate grows while V8 compiles the hot code: fresh processes run ' +
      "rlock's lock path interpreted or in baseline code for seconds, so a short warm-up measures that, not the steady state " +
      '(`BENCH_WARMUP_MS=15000` measures after it).',
  ].join('\n');
}

if (process.argv[2] === 'child') await child(JSON.parse(process.env.RLOCK_BENCH_S7 ?? '{}'));
