// @ts-check
/**
 * `npm run faults`: every object kind through every fault, with the recorded
 * history checked (see README.md beside this file). Workers (worker.mjs) run
 * each kind in separate processes and report every step; this coordinator
 * applies the faults, drives the latch's rounds, reads what is left in Redis
 * and prints the matrix (object × fault). Exit code 1 when a verdict fails.
 *
 *   npm run faults                      long form (FAULTS_SECTIONS per object, default 10,000)
 *   npm run faults -- --short           short form (CI)
 *   --json <file>                       the cells as JSON too
 *   --only <fault,fault>                a subset of the faults
 *   --no-write                          leave docs/fault-matrix.md alone
 */
import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createClient, RLockError } from '@org/rlock';
import { FaultProxy, RedisCluster, RedisFleet, RedisSentinelGroup, keySlot } from '@org/rlock-testing';
import { check, KINDS, matrix, DOCUMENTED_OVERLAP, KNOWN_DEFECTS, LEASED, MUST_TELL, losesPermits } from './check.mjs';
import { BOUND_MS, OUTAGE_MS as RELEASE_OUTAGE_MS, releaseOutage } from './outage.mjs';

const args = process.argv.slice(2);
const SHORT = args.includes('--short');
const jsonAt = args.indexOf('--json');
const JSON_PATH = jsonAt >= 0 ? args[jsonAt + 1] : undefined;
const onlyAt = args.indexOf('--only');
const ONLY = onlyAt >= 0 ? new Set(args[onlyAt + 1].split(',')) : undefined;
const WRITE_DOC = !args.includes('--no-write') && ONLY === undefined;

const WORKERS = Number(process.env.FAULTS_WORKERS ?? 3);
const PERMITS = 2;
const WATCHDOG_MS = 3_000;
/** A holder stopped this long is well past its lease. */
const FREEZE_MS = 5_000;
const PARTITION_MS = 6_000;
const LATENCY_MS = 200;
const OUTAGE_MS = 2_000;

/** Every fault, grouped by the deployment it runs on. */
const PLAN = [
  { topology: 'standalone', faults: ['none', 'holder-kill', 'holder-stop', 'redis-kill-aof', 'client-pause', 'debug-sleep', 'partition', 'latency'] },
  { topology: 'standalone-noaof', faults: ['redis-kill-noaof'] },
  { topology: 'sentinel', faults: ['sentinel-failover'] },
  { topology: 'cluster', faults: ['cluster-failover'] },
]
  .map((entry) => ({ ...entry, faults: entry.faults.filter((fault) => ONLY === undefined || ONLY.has(fault)) }))
  .filter((entry) => entry.faults.length > 0);
const FAULT_COUNT = PLAN.reduce((sum, entry) => sum + entry.faults.length, 0);
const PER_OBJECT = Number(process.env.FAULTS_SECTIONS ?? (SHORT ? 200 : 10_000));
/** Sections per cell: the object's total spread over the faults. */
const TARGET = Math.ceil(PER_OBJECT / FAULT_COUNT);
/** Runs of the release during an outage (each about 15 s). */
const OUTAGE_RUNS = Number(process.env.FAULTS_OUTAGE_RUNS ?? (SHORT ? 2 : 20));
const PHASE_LIMIT_MS = Number(process.env.FAULTS_PHASE_LIMIT_MS ?? (SHORT ? 25_000 : 600_000));

const now = () => performance.timeOrigin + performance.now();
const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (/** @type {string} */ line) => process.stderr.write(`[faults ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

/** @type {import('./check.mjs').Event[]} */
const events = [];
/** @type {import('./check.mjs').Phase[]} */
const phases = [];
const deaths = new Map();
/** Object name → its kind and fault, to attribute stores and keys. */
const names = new Map();
const stores = new Map();
const keysLeft = new Map();
const keyPrefix = `faults${process.pid}`;
let resource = /** @type {RedisFleet | undefined} */ (undefined);

/** @typedef {{ id: string, child: import('node:child_process').ChildProcess, alive: boolean, closed: Promise<void> }} Worker */

/**
 * A deployment under test: how workers reach it, its faults, and its keys.
 * @typedef {{ redisFor: (i: number) => unknown, admin: () => Promise<Redis[]>, onMaster?: (name: string) => boolean,
 *   fault: (fault: string, ctx: { workers: Worker[], replace: (w: Worker) => Worker }) => Promise<{ faultAt: number, heal: number }>, stop: () => Promise<void> }} Topology
 */

async function main() {
  resource = await RedisFleet.start({ size: 1 });
  try {
    for (const entry of PLAN) await runTopology(entry.topology, entry.faults);
    const storeClient = new Redis(resource.url(0));
    for (const name of names.keys()) {
      const hash = await storeClient.hgetall(`fence:${name}`);
      if (hash.writes !== undefined) stores.set(name, { v: Number(hash.v ?? 0), writes: Number(hash.writes) });
    }
    storeClient.disconnect();
  } finally {
    await resource.stop();
  }
  const outage = OUTAGE_RUNS > 0 && (ONLY === undefined || ONLY.has('release-outage')) ? await releaseOutage(OUTAGE_RUNS, log) : undefined;
  const cells = check({ events, phases, deaths, stores, keysLeft, permits: PERMITS, target: TARGET, names });
  const outageLine =
    outage === undefined
      ? ''
      : `Release during an outage (withLock returns while Redis is down ${RELEASE_OUTAGE_MS / 1000} s, restart from the AOF; another process must get the lock within ${BOUND_MS / 1000} s of Redis being back): ` +
        `**${outage.passed} of ${outage.runs}** runs, slowest ${Math.round(outage.worstMs)} ms.`;
  const table = `${matrix(cells)}${outageLine ? `\n\n${outageLine}` : ''}`;
  process.stdout.write(`${table}\n`);
  const failed = cells.filter((cell) => cell.verdict.startsWith('FAIL'));
  if (outage && outage.passed < outage.runs) failed.push(/** @type {any} */ ({ kind: 'lock', fault: 'release-outage' }));
  if (JSON_PATH)
    writeFileSync(
      JSON_PATH,
      JSON.stringify(
        { runAt: new Date().toISOString(), machine: machine(), short: SHORT, cells, phases, outage, keysLeft: Object.fromEntries(keysLeft) },
        null,
        2,
      ),
    );
  if (WRITE_DOC) writeDoc(table);
  if (process.env.FAULTS_EVENTS) writeFileSync(process.env.FAULTS_EVENTS, events.map((event) => JSON.stringify(event)).join('\n'));
  log(failed.length === 0 ? `every verdict holds (${cells.length} cells)` : `${failed.length} verdicts FAILED`);
  process.exitCode = failed.length === 0 ? 0 : 1;
}

/** @param {string} topologyName @param {string[]} faults */
async function runTopology(topologyName, faults) {
  log(`${topologyName}: starting`);
  const topology = await startTopology(topologyName);
  const workers = /** @type {Worker[]} */ ([]);
  let serial = 0;
  const spawn = (/** @type {number} */ i) => {
    const id = `${topologyName}-w${i}-${serial++}`;
    const config = { id, redis: topology.redisFor(i), resource: resource?.url(0), keyPrefix, permits: PERMITS, watchdogTimeoutMs: WATCHDOG_MS };
    const child = fork(fileURLToPath(new URL('./worker.mjs', import.meta.url)), [], {
      env: { ...process.env, FAULTS_WORKER: JSON.stringify(config) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const worker = /** @type {Worker} */ ({ id, child, alive: true, closed: Promise.resolve() });
    child.on('exit', () => {
      worker.alive = false;
      if (!deaths.has(id)) deaths.set(id, now());
    });
    // Closed once its IPC channel is: its last events can arrive after 'exit'.
    worker.closed = new Promise((resolve) => child.on('close', () => resolve(undefined)));
    child.on('message', (/** @type {any} */ event) => onEvent(worker, event));
    // A message to a worker that was just killed fails; its death is recorded by 'exit'.
    child.on('error', () => undefined);
    return worker;
  };
  const readies = [];
  for (let i = 0; i < WORKERS; i += 1) {
    const worker = spawn(i);
    workers.push(worker);
    readies.push(waitFor((event) => event.w === worker.id && event.e === 'ready', 20_000));
  }
  await Promise.all(readies);
  const coordinator = createClient({ redis: /** @type {never} */ (topology.redisFor(WORKERS)), keyPrefix, watchdogTimeoutMs: WATCHDOG_MS });
  coordinator.on('error', () => undefined);
  let current = /** @type {{ fault: string, names: Record<string, string> } | undefined} */ (undefined);
  const replace = (/** @type {Worker} */ dead) => {
    const index = workers.indexOf(dead);
    const worker = spawn(index);
    workers[index] = worker;
    void waitFor((event) => event.w === worker.id && event.e === 'ready', 20_000).then(() => {
      if (current) tell(worker, { type: 'phase', phase: current.fault, names: current.names });
    });
    return worker;
  };
  try {
    for (const fault of faults) {
      const objectNames = namesFor(fault, topology);
      current = { fault, names: objectNames };
      const phase = { fault, topology: topologyName, start: now(), faultAt: 0, heal: 0, end: 0, strictFifo: fault === 'none' };
      phases.push(phase);
      for (const worker of workers) if (worker.alive) tell(worker, { type: 'phase', phase: fault, names: objectNames });
      const latch = latchRounds(fault, coordinator, workers, topology);
      log(`${topologyName}: ${fault}: ${TARGET} sections per object`);
      await untilSections(fault, phase.start, Math.ceil(TARGET / 3), PHASE_LIMIT_MS);
      const { faultAt, heal } = await topology.fault(fault, { workers, replace });
      phase.faultAt = faultAt;
      phase.heal = heal;
      await untilSections(fault, heal, Math.ceil(TARGET / 2), PHASE_LIMIT_MS, TARGET);
      phase.end = now();
      latch.stop();
      await latch.done;
    }
  } finally {
    const closing = workers.filter((worker) => worker.alive);
    for (const worker of closing) tell(worker, { type: 'stop' });
    const hung = await Promise.race([Promise.all(closing.map((worker) => worker.closed)).then(() => false), sleep(20_000).then(() => true)]);
    if (hung) {
      events.push({ w: 'coordinator', t: now(), e: 'unhandled', message: 'a worker did not close within 20 s' });
      for (const worker of closing) worker.child.kill('SIGKILL');
    }
    await coordinator.close().catch(() => undefined);
    const last = phases[phases.length - 1];
    if (last) last.end = Math.max(last.end, now());
    await scanKeys(topology);
    await topology.stop();
  }
}

/** Sends a message to a worker unless it is gone. @param {Worker} worker @param {unknown} message */
function tell(worker, message) {
  if (worker.alive && worker.child.connected) worker.child.send(/** @type {any} */ (message), () => undefined);
}

/** Records a worker's event; a phase fault waits on some of them. @param {Worker} worker @param {any} event */
function onEvent(worker, event) {
  events.push(event);
  for (const waiter of [...waiters]) {
    if (waiter.test(event)) {
      waiters.delete(waiter);
      waiter.resolve(event);
    }
  }
  void worker;
}

const waiters = new Set();
/** Resolves with the first event (from now on) that passes `test`; rejects after `ms`. */
function waitFor(/** @type {(event: any) => boolean} */ test, /** @type {number} */ ms) {
  return new Promise((resolve, reject) => {
    const waiter = { test, resolve: (/** @type {any} */ event) => (clearTimeout(timer), resolve(event)) };
    const timer = setTimeout(() => {
      waiters.delete(waiter);
      reject(new Error(`no such event within ${ms} ms`));
    }, ms);
    waiters.add(waiter);
  });
}

/** Waits until every kind has `after` sections entered since `since` and `total` in the phase, or the limit. */
async function untilSections(/** @type {string} */ fault, /** @type {number} */ since, /** @type {number} */ after, /** @type {number} */ limitMs, total = 0) {
  const deadline = now() + limitMs;
  const counted = new Map();
  let seen = 0;
  const totals = new Map();
  while (now() < deadline) {
    for (; seen < events.length; seen += 1) {
      const event = events[seen];
      if (event.p !== fault || !(event.e === 'enter' || event.e === 'open')) continue;
      totals.set(event.k, (totals.get(event.k) ?? 0) + 1);
      if (event.t >= since) counted.set(event.k, (counted.get(event.k) ?? 0) + 1);
    }
    // A semaphore whose permits may be gone for good (documented) is not waited for.
    const lost = (/** @type {string} */ kind) => kind === 'sem' && events.some((event) => losesPermits(event, fault));
    if (KINDS.every((kind) => lost(kind) || ((counted.get(kind) ?? 0) >= after && (totals.get(kind) ?? 0) >= total))) return;
    await sleep(50);
  }
}

/**
 * The latch's rounds for one phase: set the count to the number of live
 * workers, let each count down once and wait for the latch to open; a worker
 * that died is counted down for, so that the next round can start.
 */
function latchRounds(
  /** @type {string} */ fault,
  /** @type {import('@org/rlock').RLockClient} */ client,
  /** @type {Worker[]} */ workers,
  /** @type {Topology} */ topology,
) {
  let stopped = false;
  const done = (async () => {
    for (let round = 0; !stopped; round += 1) {
      const name = pick(`latch:${fault}:${round}`, topology);
      names.set(name, { kind: 'latch', phase: fault });
      const latch = client.getCountDownLatch(name);
      const members = workers.filter((worker) => worker.alive);
      // Only this loop sets a latch, so a false means an earlier try that timed out did set it: the round goes on.
      for (let set = false; !set;) {
        try {
          await latch.trySetCount(members.length);
          set = true;
        } catch (error) {
          events.push({ w: 'coordinator', t: now(), e: 'error', where: 'latch', typed: error instanceof RLockError, message: String(error) });
          await sleep(200);
        }
      }
      events.push({ w: 'coordinator', t: now(), e: 'set', k: 'latch', p: fault, round, count: members.length });
      for (const worker of members) tell(worker, { type: 'latch', name, round, phase: fault });
      const reported = new Set();
      const counted = new Set();
      const filled = new Set();
      const deadline = now() + 12_000;
      let seen = events.length;
      while (now() < deadline) {
        for (; seen < events.length; seen += 1) {
          const event = events[seen];
          if (event.k !== 'latch' || event.round !== round || event.p !== fault) continue;
          if (event.e === 'countDown') counted.add(event.w);
          if (event.e === 'open' || event.e === 'notOpen') reported.add(event.w);
        }
        // A worker killed before its count-down is counted down for, as its replacement would not know the round.
        for (const worker of members) {
          if (worker.alive || counted.has(worker.id) || filled.has(worker.id)) continue;
          filled.add(worker.id);
          await countDown(latch, fault, round);
        }
        if (members.every((worker) => reported.has(worker.id) || !worker.alive)) break;
        await sleep(20);
      }
      // Count down for count-downs that failed, as many times as the count still says, so that no round stays open.
      try {
        const left = await latch.getCount();
        for (let i = 0; i < left; i += 1) await countDown(latch, fault, round);
      } catch (error) {
        events.push({ w: 'coordinator', t: now(), e: 'error', where: 'latch', typed: error instanceof RLockError, message: String(error) });
      }
    }
  })();
  return {
    done,
    stop: () => {
      stopped = true;
    },
  };
}

/** The coordinator's own count-down, recorded as a worker's is. */
async function countDown(/** @type {import('@org/rlock').RCountDownLatch} */ latch, /** @type {string} */ fault, /** @type {number} */ round) {
  events.push({ w: 'coordinator', t: now(), e: 'countDown', k: 'latch', round, p: fault });
  try {
    await latch.countDown();
  } catch (error) {
    events.push({ w: 'coordinator', t: now(), e: 'error', where: 'latch', typed: error instanceof RLockError, message: String(error) });
  }
}

/** The objects of one phase: fresh names, so that each cell's keys and history are its own. */
function namesFor(/** @type {string} */ fault, /** @type {Topology} */ topology) {
  const map = /** @type {Record<string, string>} */ ({});
  for (const kind of KINDS) {
    if (kind === 'latch') continue;
    if (kind === 'multi') {
      const a = pick(`multi-a:${fault}`, topology);
      const b = pick(`multi-b:${fault}`, topology);
      names.set(a, { kind, phase: fault });
      names.set(b, { kind, phase: fault });
      map[kind] = `${a} ${b}`;
      continue;
    }
    map[kind] = pick(`${kind}:${fault}`, topology);
    names.set(map[kind], { kind, phase: fault });
  }
  return map;
}

/** `base`, or on a Cluster the first `base:<n>` whose slot the master to be failed over serves. */
function pick(/** @type {string} */ base, /** @type {Topology} */ topology) {
  if (!topology.onMaster) return base;
  for (let n = 0; ; n += 1) if (topology.onMaster(`${base}:${n}`)) return `${base}:${n}`;
}

/** Keys of this run still there without a TTL, by kind and fault (fence counters, semaphore counts and a pool's held permits are kept by design). */
async function scanKeys(/** @type {Topology} */ topology) {
  for (const redis of await topology.admin()) {
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}:*`, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) {
          if (key.endsWith(':fence')) continue;
          const match = /\{([^}]*)\}/.exec(key);
          const owner = match ? names.get(match[1]) : undefined;
          // A semaphore's count and its kind marker are its state, kept for good.
          const main = `${keyPrefix}:{${match?.[1]}}`;
          if (owner && (owner.kind === 'sem' || owner.kind === 'psem') && (key === main || key === `${main}:kind`)) continue;
          // A permit pool's held permits are pool state, as its count is: an entry whose holder never released stays until
          // the next call on the name gives its permit back (docs/permit-expirable-semaphore.md: Data layout). Never more
          // entries than permits, or they leak.
          if (owner?.kind === 'psem' && (key.endsWith(':leases') || key.endsWith(':holders'))) {
            const entries = key.endsWith(':leases') ? await redis.zcard(key) : await redis.hlen(key);
            if (entries <= PERMITS) continue;
          }
          // -2: expired since the SCAN (markers live commandTimeoutMs); only -1 is a key without a TTL.
          if ((await redis.pttl(key)) !== -1) continue;
          const cell = `${owner?.kind ?? 'lock'}|${owner?.phase ?? 'none'}`;
          keysLeft.set(cell, [...(keysLeft.get(cell) ?? []), key]);
        }
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
  }
}

/** @returns {Promise<Topology>} */
async function startTopology(/** @type {string} */ name) {
  switch (name) {
    case 'standalone':
    case 'standalone-noaof': {
      const persistent = name === 'standalone';
      const fleet = await RedisFleet.start(persistent ? { size: 1, appendonly: true, appendfsync: 'always' } : { size: 1 });
      // Worker 0 reaches Redis through a proxy: the partition and the latency are its alone.
      const proxy = await FaultProxy.start({ port: fleet.port(0) });
      return {
        redisFor: (i) => (i === 0 ? proxy.url : fleet.url(0)),
        admin: async () => [new Redis(fleet.url(0))],
        fault: (fault, ctx) => standaloneFault(fault, fleet, proxy, ctx),
        stop: async () => {
          await proxy.stop();
          await fleet.stop();
        },
      };
    }
    case 'sentinel': {
      const group = await RedisSentinelGroup.start({ replicas: 1, downAfterMs: 1_000, failoverTimeoutMs: 3_000 });
      const redis = { sentinels: group.sentinels.map(({ host, port }) => ({ host, port })), name: group.masterName };
      return {
        redisFor: () => redis,
        admin: async () => {
          const master = await group.currentMaster();
          return [new Redis(master.port, master.host)];
        },
        fault: async () => {
          const faultAt = now();
          const old = await group.killMaster();
          await group.waitForFailover(old);
          return { faultAt, heal: now() };
        },
        stop: () => group.stop(),
      };
    }
    case 'cluster': {
      const cluster = await RedisCluster.start({ masters: 3, replicasPerMaster: 1, nodeTimeoutMs: 1_000 });
      const victim = cluster.masters()[0];
      const onMaster = (/** @type {string} */ objectName) => {
        const slot = keySlot(`{${objectName}}`);
        return victim.slots.some(([first, last]) => slot >= first && slot <= last);
      };
      return {
        redisFor: () => ({ cluster: cluster.startupNodes.map(({ host, port }) => `redis://${host}:${port}`) }),
        onMaster,
        admin: async () => {
          const nodes = await cluster.refresh();
          return nodes.filter((node) => node.role === 'master' && node.running && node.slots.length > 0).map((node) => new Redis(node.port, node.host));
        },
        fault: async () => {
          const faultAt = now();
          const old = await cluster.killMaster(victim);
          await cluster.waitForFailover(old);
          return { faultAt, heal: now() };
        },
        stop: () => cluster.stop(),
      };
    }
    default:
      throw new Error(`unknown topology ${name}`);
  }
}

/** @param {string} fault @param {RedisFleet} fleet @param {FaultProxy} proxy @param {{ workers: Worker[], replace: (w: Worker) => Worker }} ctx */
async function standaloneFault(fault, fleet, proxy, ctx) {
  const faultAt = now();
  switch (fault) {
    case 'none':
      return { faultAt, heal: faultAt };
    case 'holder-kill':
    case 'holder-stop': {
      // Worker 1 holds every kind it can at once (a barrier inside its sections), then is killed or stops itself.
      const victim = /** @type {Worker} */ (ctx.workers[1]);
      const mode = fault === 'holder-kill' ? 'kill' : 'freeze';
      const ready = waitFor((event) => event.w === victim.id && (event.e === 'doomed' || event.e === 'frozen'), 15_000);
      tell(victim, { type: 'arm', mode, ms: 4_000 });
      const event = await ready;
      log(`${fault}: ${victim.id} holds ${event.kinds.join(', ')}`);
      const at = now();
      if (mode === 'kill') {
        deaths.set(victim.id, at);
        victim.child.kill('SIGKILL');
        await victim.closed;
        ctx.replace(victim);
        return { faultAt: at, heal: at };
      }
      await sleep(FREEZE_MS);
      victim.child.kill('SIGCONT');
      return { faultAt: at, heal: now() };
    }
    case 'redis-kill-aof':
    case 'redis-kill-noaof':
      await fleet.kill(0);
      await sleep(OUTAGE_MS);
      await fleet.restart(0);
      return { faultAt, heal: now() };
    case 'client-pause':
    case 'debug-sleep': {
      const admin = new Redis(fleet.url(0));
      try {
        await admin.ping();
        if (fault === 'client-pause') await fleet.clientPause(0, OUTAGE_MS);
        else await fleet.debugSleep(0, OUTAGE_MS / 1000);
        // Served only once the server runs clients' commands again.
        await admin.ping();
      } finally {
        admin.disconnect();
      }
      return { faultAt, heal: now() };
    }
    case 'partition':
      proxy.blackhole();
      await sleep(PARTITION_MS);
      proxy.heal();
      return { faultAt, heal: now() };
    case 'latency':
      proxy.delay(LATENCY_MS);
      await sleep(PARTITION_MS);
      proxy.heal();
      return { faultAt, heal: now() };
    default:
      throw new Error(`unknown fault ${fault}`);
  }
}

/** The machine a run ran on, in one line. */
function machine() {
  const cpus = os.cpus();
  return `${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`;
}

/** docs/fault-matrix.md: the latest matrix, with the machine and the date. */
function writeDoc(/** @type {string} */ table) {
  const lines = [
    '# Fault matrix',
    '',
    `Generated by \`npm run faults${SHORT ? ' -- --short' : ''}\` (scripts/faults) on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC;`,
    `${machine()}.`,
    `${WORKERS} worker processes per deployment, each running every kind; ${TARGET} sections per cell asked, ${PERMITS} permits, watchdog lease ${WATCHDOG_MS} ms.`,
    'Do not edit: the runner rewrites this file.',
    '',
    // Drawn from this file, so it is redrawn after a run rather than by it (its renderer is the bench's dependency).
    '![The fault matrix at a glance: objects × faults, coloured by verdict, with the overlapping and the critical sections of each cell](charts/fault-matrix.svg)',
    '',
    'The chart is drawn from the table below: `node scripts/bench/charts.mjs --faults` (see [scripts/faults](../scripts/faults/README.md)).',
    '',
    'Where the docs say a fault can break exclusion, overlaps are allowed (marked), and the fenced store must still refuse every stale write (no lost update):',
    '',
    ...Object.entries(DOCUMENTED_OVERLAP).map(([fault, { kinds, why }]) => `- **${fault}** (${[...kinds].join(', ')}): ${why}.`),
    '',
    `A holder that was replaced while it still acted (the earlier of two overlapping sections; of the permit pool, the longest held of the permits too many) must be told it lost: its hold's signal aborts before its release settles (during the section or after it), or the release rejects with \`LockLostError\` or \`IllegalMonitorStateError\`. "replaced holders told" counts them (told/replaced) for the kinds with a lease (${[...LEASED].join(', ')}). After ${[...MUST_TELL].join(', ')} a holder never told fails its cell: a holder paused past its lease learns it lost when it runs again (docs/concepts.md: Why a holder can lose a lock it thinks it holds). After the other faults the count is a note.`,
    '',
    ...(Object.keys(KNOWN_DEFECTS).length === 0
      ? []
      : [
          'Known defects, shown as such when they occur, without failing the run:',
          '',
          ...Object.entries(KNOWN_DEFECTS).map(([cell, { what }]) => `- **${cell.replace('|', ' × ')}**: ${what}.`),
          '',
        ]),
    table,
    '',
  ];
  writeFileSync(fileURLToPath(new URL('../../docs/fault-matrix.md', import.meta.url)), lines.join('\n'));
}

await main();
