// @ts-check
/**
 * s8 — what one client and one Redis carry as the work grows: bytes and keys
 * per held lock, what releases leave, client heap per hold, many waiting
 * processes, sustained churn (parts described in scripts/bench/README.md).
 * The heap and waiter parts run in children of this file (argument `child`).
 */
import { fork } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { parseInfo } from './machine.mjs';
import { snapshot, usageBetween } from './server-stats.mjs';
import { markdownTable, ms, num } from './table.mjs';

export const id = 's8';
export const title = 's8 (rlock only) — scale: Redis bytes and client heap per held lock, what a release leaves, many waiting processes, sustained churn';

const NAMES = Number(process.env.BENCH_SCALE_NAMES ?? 100_000);
const HEAP_HOLDS = Number(process.env.BENCH_SCALE_HEAP_HOLDS ?? 10_000);
const SUSTAIN_MS = Number(process.env.BENCH_SCALE_SUSTAIN_MS ?? 60_000);
const WAITERS = 1_000;
const LEASE_MS = 600_000;
const BATCH = 500;

/** The builds to measure: this checkout's, and BENCH_RLOCK_BASELINE's when given. */
const BUILDS = [{ label: 'rlock', entry: '@org/rlock' }];
if (process.env.BENCH_RLOCK_BASELINE) {
  BUILDS.push({ label: 'rlock baseline', entry: `file://${process.env.BENCH_RLOCK_BASELINE.replace(/\/$/, '')}/packages/rlock/dist/esm/index.js` });
}

/** @param {string} entry @returns {Promise<typeof import('@org/rlock')>} */
const load = (entry) => import(entry);

/** @param {Redis} admin */
async function usedMemory(admin) {
  return Number(parseInfo(await admin.info('memory')).used_memory ?? 0);
}

/** @param {number} n @param {(i: number) => Promise<unknown>} each in batches of BATCH */
async function inBatches(n, each) {
  for (let start = 0; start < n; start += BATCH) {
    await Promise.all(Array.from({ length: Math.min(BATCH, n - start) }, (_, k) => each(start + k)));
  }
}

/** Keys under `prefix` other than fence counters (one per hash slot used, kept for good by design). @param {Redis} admin @param {string} prefix */
async function keysBesidesFences(admin, prefix) {
  let count = 0;
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5000);
    cursor = next;
    count += keys.filter((key) => !key.endsWith(':fence')).length;
  } while (cursor !== '0');
  return count;
}

/** Polls until no key besides fence counters is left under `prefix` (at most 30 s); returns how long it took, ms. */
async function untilGone(/** @type {Redis} */ admin, /** @type {string} */ prefix) {
  const start = performance.now();
  while ((await keysBesidesFences(admin, prefix)) > 0 && performance.now() - start < 30_000) await sleep(250);
  return performance.now() - start;
}

/**
 * Where the held-locks part and the 100k-name churn put their keys: on the
 * run's own server, the default prefix (`rlock`), so a key is as long as a
 * user's; on a shared server (REDIS_URL), under the run's unique prefix.
 * @param {import('./run.mjs').BenchContext} ctx
 */
const namesPrefix = (ctx) => (process.env.REDIS_URL ? `${ctx.keyPrefix}-s8` : 'rlock');

/** The server's hash-table overhead of db 0 (`MEMORY STATS`), as one string to compare. @param {Redis} admin */
async function tableOverhead(admin) {
  const stats = /** @type {unknown[]} */ (await admin.call('MEMORY', 'STATS'));
  const at = stats.indexOf('db.0');
  return at === -1 ? '' : JSON.stringify(stats[at + 1]);
}

/**
 * Waits until the server has resized its hash tables after mass deletions
 * (its cron shrinks them a step at a time), at most 10 s: a `used_memory`
 * baseline read before then would count the tables' shrinking against the
 * next measurement.
 * @param {Redis} admin
 */
async function settle(admin) {
  const start = performance.now();
  let last = await tableOverhead(admin);
  while (performance.now() - start < 10_000) {
    await sleep(300);
    const now = await tableOverhead(admin);
    if (now === last) return;
    last = now;
  }
}

/** @param {import('./run.mjs').BenchContext} ctx @param {Redis} admin */
async function heldLocks(ctx, admin) {
  const rows = [];
  const prefix = namesPrefix(ctx);
  /** @type {{ label: string, bytes: number, keysHeld: number, keysLeft: number, bytesLeft: number, goneMs: number, keyLength: number, valueLength: number }[]} */
  const measured = [];
  let rawBytes = Number.NaN;
  let rawValueLength = 0;
  for (const [index, build] of BUILDS.entries()) {
    ctx.log(`s8: ${NAMES} held locks, ${build.label}`);
    const { createClient } = await load(build.entry);
    const client = createClient({ redis: ctx.url, keyPrefix: prefix, unrefWhenIdle: false });
    /** @type {{ unlock(): Promise<unknown> }[]} */
    const holds = [];
    const holdAll = () => inBatches(NAMES, (i) => client.task(async () => (holds[i] = await client.getLock(`n${i}`).acquire({ leaseMs: LEASE_MS }))));
    const releaseAll = () => inBatches(NAMES, (i) => /** @type {{ unlock(): Promise<unknown> }} */ (holds[i]).unlock());
    // A first round creates the fence counters (one per hash slot, kept): the measured round is what a hold itself costs.
    await holdAll();
    const sample = `${prefix}:{n${NAMES - 1}}`;
    const value = (await admin.get(sample)) ?? '';
    await releaseAll();
    await untilGone(admin, prefix);
    if (index === 0) {
      // The raw lock, in the same server state (fences there, tables settled),
      // with the same keys and an owner as long as rlock's (client id, task id).
      const owner = `${'x'.repeat(value.split(' ')[2]?.split(':')[0]?.length ?? 21)}:t${NAMES}`;
      rawValueLength = owner.length;
      await settle(admin);
      const base = await usedMemory(admin);
      await inBatches(NAMES, (i) => admin.set(`${prefix}:{n${i}}`, owner, 'PX', LEASE_MS, 'NX'));
      rawBytes = ((await usedMemory(admin)) - base) / NAMES;
      await inBatches(NAMES, (i) => admin.del(`${prefix}:{n${i}}`));
    }
    await settle(admin);
    const before = await usedMemory(admin);
    await holdAll();
    const held = await usedMemory(admin);
    const valueHeld = (await admin.get(sample)) ?? '';
    const keysHeld = await keysBesidesFences(admin, prefix);
    await releaseAll();
    const keysLeft = await keysBesidesFences(admin, prefix);
    const bytesLeft = (await usedMemory(admin)) - before;
    const goneMs = await untilGone(admin, prefix);
    await client.close();
    measured.push({
      label: build.label,
      bytes: (held - before) / NAMES,
      keysHeld,
      keysLeft,
      bytesLeft,
      goneMs,
      keyLength: sample.length,
      valueLength: valueHeld.length,
    });
  }
  rows.push(['raw SET NX PX', num(rawBytes), '1.00', '–', `${measured[0]?.keyLength} + ${rawValueLength}`, '–', '–']);
  for (const m of measured) {
    rows.push([
      m.label,
      num(m.bytes),
      (m.bytes / rawBytes).toFixed(2),
      num(m.keysHeld / NAMES, 2),
      `${m.keyLength} + ${m.valueLength}`,
      `${num(m.keysLeft)} keys, ${num(m.bytesLeft / NAMES)} B/release`,
      ms(m.goneMs),
    ]);
  }
  await settle(admin);
  return markdownTable(
    [
      'lock',
      'Redis bytes per held lock',
      '× raw',
      'keys per held lock',
      'key + value, characters',
      `left right after ${num(NAMES)} releases`,
      'until those are gone',
    ],
    rows,
    'lrrrrrr',
  );
}

/** The heap and waiter parts, in a child process. @param {any} config */
async function child(config) {
  const { createClient } = await load(config.entry);
  const client = createClient({ redis: config.url, keyPrefix: config.keyPrefix, unrefWhenIdle: false });
  if (config.part === 'heap') {
    const gc = /** @type {() => void} */ (globalThis.gc);
    const heap = () => (gc(), gc(), process.memoryUsage().heapUsed);
    // One warm-up round so code, connections and caches are built before the baseline.
    await client.task(async () => (await client.getLock('warm').acquire()).unlock());
    const base = heap();
    /** @type {{ unlock(): Promise<unknown> }[]} */
    const holds = [];
    await inBatches(config.holds, (i) => client.task(async () => holds.push(await client.getLock(`h${i}`).acquire())));
    const perHold = (heap() - base) / config.holds;
    await Promise.all(holds.map((h) => h.unlock()));
    holds.length = 0;
    const base2 = heap();
    /** @type {() => void} */
    let open = () => undefined;
    const gate = new Promise((resolve) => (open = () => resolve(undefined)));
    let inside = 0;
    /** @type {() => void} */
    let allInside = () => undefined;
    const everyoneInside = new Promise((resolve) => (allInside = () => resolve(undefined)));
    const scopes = Array.from({ length: config.holds }, (_, i) =>
      client.getLock(`w${i}`).withLock(async () => {
        if (++inside === config.holds) allInside();
        await gate;
      }),
    );
    await everyoneInside;
    const perScope = (heap() - base2) / config.holds;
    open();
    await Promise.all(scopes);
    // The same fn held open the same way with no lock (in a task, so the async
    // context's hooks run on its promises as in a scope): its frame and
    // promises are the caller's, counted in the figure above, not withLock's.
    const base3 = heap();
    /** @type {() => void} */
    let open2 = () => undefined;
    const gate2 = new Promise((resolve) => (open2 = () => resolve(undefined)));
    let inside2 = 0;
    /** @type {() => void} */
    let allInside2 = () => undefined;
    const everyoneInside2 = new Promise((resolve) => (allInside2 = () => resolve(undefined)));
    const fns = await client.task(() =>
      // A closure made per call, as each scope's fn is.
      Array.from({ length: config.holds }, () =>
        (async () => {
          if (++inside2 === config.holds) allInside2();
          await gate2;
        })(),
      ),
    );
    await everyoneInside2;
    const perFn = (heap() - base3) / config.holds;
    open2();
    await Promise.all(fns);
    await client.close();
    process.send?.({ perHold, perScope, perFn });
    return;
  }
  // part 'waiters': `tasks` tasks, each acquiring `name` once after 'go'.
  const lock = config.fair ? client.getFairLock('one') : client.getLock('one');
  const waits = /** @type {number[]} */ ([]);
  process.send?.({ ready: true });
  await new Promise((resolve) => process.once('message', resolve));
  await Promise.all(
    Array.from({ length: config.tasks }, () =>
      client.task(async () => {
        const start = performance.now();
        await lock.lock({ leaseMs: 10_000 });
        waits.push(performance.now() - start);
        await lock.unlock();
      }),
    ),
  );
  await client.close();
  process.send?.({ longest: Math.max(...waits) });
}

/** Starts `count` children of this file and returns their next-message readers. @param {any[]} configs @param {string[]} [execArgv] */
function children(configs, execArgv = []) {
  return configs.map((config) => {
    const c = fork(fileURLToPath(import.meta.url), ['child'], {
      env: { ...process.env, RLOCK_BENCH_S8: JSON.stringify(config) },
      execArgv,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    /** @type {unknown[]} */
    const seen = [];
    /** @type {((m: any) => void)[]} */
    const waiting = [];
    c.on('message', (m) => (waiting.shift() ?? ((x) => seen.push(x)))(m));
    c.on('exit', (code) => code !== 0 && waiting.forEach((w) => w({ error: `exit ${code}` })));
    return { process: c, next: () => /** @type {Promise<any>} */ (new Promise((resolve) => (seen.length ? resolve(seen.shift()) : waiting.push(resolve)))) };
  });
}

/** @param {import('./run.mjs').BenchContext} ctx */
async function heapPerHold(ctx) {
  const rows = [];
  for (const build of BUILDS) {
    ctx.log(`s8: client heap, ${HEAP_HOLDS} holds, ${build.label}`);
    const [c] = children([{ part: 'heap', entry: build.entry, url: ctx.url, keyPrefix: `${ctx.keyPrefix}-s8heap`, holds: HEAP_HOLDS }], ['--expose-gc']);
    const report = await /** @type {NonNullable<typeof c>} */ (c).next();
    rows.push([build.label, num(report.perHold), num(report.perScope), num(report.perFn), num(report.perScope - report.perFn)]);
  }
  return markdownTable(
    [
      'build',
      'heap per hold, `acquire()`, bytes',
      'heap per hold inside `withLock`, bytes',
      "of which the scope's own async fn (held alone the same way), bytes",
      "withLock's own, bytes",
    ],
    rows,
    'lrrrr',
  );
}

/** @param {import('./run.mjs').BenchContext} ctx @param {Redis} admin */
async function manyWaiters(ctx, admin) {
  const rows = [];
  for (const processes of [4, 8, 16]) {
    for (const fair of [false, true]) {
      for (const build of BUILDS) {
        const keyPrefix = `${ctx.keyPrefix}-s8w${processes}${fair ? 'f' : 'p'}${build.label.length}`;
        ctx.log(`s8: ${WAITERS} waiters over ${processes} processes, ${fair ? 'fair' : 'plain'} lock, ${build.label}`);
        const { createClient } = await load(build.entry);
        const holder = createClient({ redis: ctx.url, keyPrefix, unrefWhenIdle: false });
        const first = await (fair ? holder.getFairLock('one') : holder.getLock('one')).acquire({ leaseMs: 60_000 });
        // WAITERS tasks in all (16 does not divide 1,000: some processes run one more).
        const tasks = (/** @type {number} */ i) => Math.floor(WAITERS / processes) + (i < WAITERS % processes ? 1 : 0);
        const kids = children(
          Array.from({ length: processes }, (_, i) => ({ part: 'waiters', entry: build.entry, url: ctx.url, keyPrefix, fair, tasks: tasks(i) })),
        );
        await Promise.all(kids.map((k) => k.next()));
        const before = await snapshot(admin);
        for (const k of kids) k.process.send('go');
        // Every task is waiting (subscribed and refused once) before the first release.
        await sleep(1_000);
        await first.unlock();
        const reports = await Promise.all(kids.map((k) => k.next()));
        const usage = usageBetween(before, await snapshot(admin));
        if (process.env.BENCH_S8_CALLS) ctx.log(JSON.stringify(usage.calls));
        await holder.close();
        const scripts = ((usage.calls.evalsha ?? 0) + (usage.calls.eval ?? 0)) / WAITERS;
        const publishes = ((usage.calls.publish ?? 0) + (usage.calls.spublish ?? 0)) / WAITERS;
        const longest = Math.max(...reports.map((r) => r.longest ?? Number.NaN));
        rows.push([`${fair ? 'fair' : 'plain'} lock, ${processes} processes`, build.label, num(scripts, 2), num(publishes, 2), ms(longest - 1_000)]);
      }
    }
  }
  return markdownTable(['row', 'build', 'scripts per acquisition', 'PUBLISHes per acquisition', 'longest wait after the first release'], rows, 'llrrr');
}

/**
 * S1's 64 tasks for SUSTAIN_MS, each on its own name (64 names: every release
 * overwrites its name's tombstone), then each walking its share of NAMES names
 * (every release leaves a tombstone on a name of its own, so live tombstones
 * are what the churn made within their life). The 100k-name rows use the held
 * part's names, whose fence counters are there already.
 * @param {import('./run.mjs').BenchContext} ctx @param {Redis} admin
 */
async function sustained(ctx, admin) {
  const rows = [];
  const TASKS = 64;
  for (const names of [TASKS, NAMES]) {
    for (const build of BUILDS) {
      ctx.log(`s8: ${SUSTAIN_MS} ms of S1 churn over ${names} names, ${build.label}`);
      const { createClient } = await load(build.entry);
      const prefix = names === TASKS ? `${ctx.keyPrefix}-s8s${build.label.length}` : namesPrefix(ctx);
      const client = createClient({ redis: ctx.url, keyPrefix: prefix, unrefWhenIdle: false });
      await settle(admin);
      const baseKeys = await admin.dbsize();
      const base = await usedMemory(admin);
      const end = performance.now() + SUSTAIN_MS;
      let pairs = 0;
      const loops = Array.from({ length: TASKS }, (_, i) =>
        client.task(async () => {
          for (let k = i; performance.now() < end; k = (k + TASKS) % names) {
            const lock = client.getLock(names === TASKS ? `s${k}` : `n${k}`);
            await lock.lock({ leaseMs: 10_000 });
            await lock.unlock();
            pairs++;
          }
        }),
      );
      const samples = [];
      let lastBytes = 0;
      let lastKeys = 0;
      for (let at = 5_000; at <= SUSTAIN_MS; at += 5_000) {
        await sleep(Math.max(0, end - SUSTAIN_MS + at - performance.now()));
        lastBytes = (await usedMemory(admin)) - base;
        lastKeys = (await admin.dbsize()) - baseKeys;
        samples.push(`${at / 1000} s: ${num(lastBytes / 1024)} KiB, ${num(lastKeys)} keys`);
      }
      await Promise.all(loops);
      await client.close();
      rows.push([`${num(names)} names`, build.label, num(pairs / (SUSTAIN_MS / 1000)), lastKeys > 0 ? num(lastBytes / lastKeys) : '–', samples.join(' · ')]);
      // The next row starts from a server without this one's tombstones.
      await untilGone(admin, prefix);
    }
  }
  return markdownTable(
    ['names', 'build', 'pairs/s', 'bytes per key above the start, at the end', 'Redis memory and keys above the start, every 5 s'],
    rows,
    'llrrl',
  );
}

/** @param {import('./run.mjs').BenchContext} ctx */
export async function run(ctx) {
  const admin = new Redis(ctx.url);
  try {
    const only = (process.env.BENCH_SCALE_PARTS ?? 'held,heap,waiters,churn').split(',');
    const parts = [];
    if (only.includes('held')) parts.push(`### ${num(NAMES)} locks held at once`, await heldLocks(ctx, admin));
    if (only.includes('heap')) parts.push(`\n### Client heap per hold (${num(HEAP_HOLDS)} holds, after a full GC)`, await heapPerHold(ctx));
    if (only.includes('waiters')) parts.push(`\n### ${num(WAITERS)} waiters on one name`, await manyWaiters(ctx, admin));
    if (only.includes('churn')) parts.push(`\n### S1 churn for ${num(SUSTAIN_MS / 1000)} s`, await sustained(ctx, admin));
    parts.push(
      '',
      'Bytes are `used_memory` deltas divided by the count, each from a server whose hash tables have settled (so they include ' +
        "Redis's own per-key cost: table entries and buckets, the expiry entry). The raw lock is measured in the same server state " +
        "(fence counters there), with the same keys and an owner as long as rlock's; key and value lengths are the held locks'. " +
        `Keys are under the default prefix (\`rlock\`) on the run's own server, under the run's prefix on a shared one. ` +
        'Scripts per acquisition count ' +
        'every EVALSHA/EVAL from the first try to the last release (each acquisition needs at least its acquire and its release: 2); ' +
        "the longest wait is a task's lock() call, minus the second the first holder kept it. In the churn, the 64-name rows are S1 " +
        "(each release overwrites its name's tombstone); in the 100,000-name rows each task walks its share of the held part's names, " +
        'so every release leaves a tombstone of its own until it expires.',
    );
    return parts.join('\n');
  } finally {
    await admin.quit();
  }
}

if (process.argv[2] === 'child') {
  await child(JSON.parse(process.env.RLOCK_BENCH_S8 ?? '{}'));
  process.exit(0);
}
