// @ts-check
/**
 * Runs the benchmarks and prints a Markdown report (machine, then one section per
 * scenario). Progress goes to stderr, the report to stdout.
 *
 *   npm run bench                 # the peer comparison, then the rlock-only scenarios
 *   npm run bench -- peers        # only the peer comparison (peers-s1, peers-s2, peers-s3, peers-limits)
 *   npm run bench -- rlock        # only the rlock-only scenarios (s1 … s5)
 *   npm run bench -- peers-s2 s3  # the ones named
 *   npm run bench -- --list
 *   npm run bench -- peers --json bench.json   # also every round's figures as JSON (scripts/bench/charts.mjs draws them)
 *   BENCH_DURATION_MS=10000 BENCH_WARMUP_MS=2000 BENCH_ROUNDS=5 npm run bench
 *   REDIS_URL=redis://host:port npm run bench   # an existing server instead of a RedisFleet
 *
 * The peer comparison (peers/*.mjs) runs rlock beside the libraries users
 * would pick instead, interleaved round by round; those libraries are dev
 * dependencies of the bench alone (scripts/bench/package.json), installed here
 * into scripts/bench/node_modules when missing.
 *
 * An rlock-only scenario is a file `s<N>-<topic>.mjs` next to this one
 * exporting `id`, `title` and `run(ctx: BenchContext): Promise<string>` (its
 * Markdown section). Adding one is adding a file. Benchmarks print numbers;
 * they never fail on a timing (exit 1 only when a scenario could not run at all).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { describeMachine } from './machine.mjs';
import { describePinning, noPinning, pinSelf, startFleet } from './servers.mjs';
import { markdownTable } from './table.mjs';

/**
 * @typedef {object} BenchContext What every scenario gets.
 * @property {string} url the Redis server under test
 * @property {string} keyPrefix unique to this run, no braces: scenarios put every key they create under it
 * @property {number} warmupMs before each measured window
 * @property {number} durationMs of each measured window
 * @property {number} rounds how many times a scenario repeats its variants (interleaved), reporting the median
 *   (BENCH_ROUNDS; default 3 for the peer comparison, 1 for the rlock-only scenarios)
 * @property {(message: string) => void} log progress, to stderr
 */

/**
 * @typedef {object} Scenario
 * @property {string} id e.g. `s1`, `peers-s1`
 * @property {string} title
 * @property {string} group `peers`, `rlock`, or a named-only scenario's id
 * @property {(ctx: BenchContext) => Promise<string>} run
 */

/** The peer comparison, in report order. */
const PEER_FILES = ['peers/s1.mjs', 'peers/s2.mjs', 'peers/s3.mjs', 'peers/s4.mjs', 'peers/limits.mjs'];
// S2's shape with a semaphore (8 permits): rlock's two semaphores beside redis-semaphore's.
PEER_FILES.push('peers/semaphore.mjs');
/** Scenarios that run only when named, each its own group: `run.mjs telemetry`. */
const NAMED_FILES = ['telemetry.mjs'];

/** @param {string} name @param {number} fallback @param {number} [min] */
function intFromEnv(name, fallback, min = 1) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min}, got ${raw}`);
  return value;
}

/** @returns {Promise<Scenario[]>} the peer comparison, then every s<N>-*.mjs here in N order */
async function loadScenarios() {
  const files = readdirSync(new URL('.', import.meta.url))
    .filter((file) => /^s\d+-.+\.mjs$/.test(file))
    .sort((a, b) => Number(/^s(\d+)/.exec(a)?.[1]) - Number(/^s(\d+)/.exec(b)?.[1]));
  /** @type {Scenario[]} */
  const scenarios = [];
  for (const file of [...PEER_FILES, ...files, ...NAMED_FILES]) {
    const module = await import(new URL(file, import.meta.url).href);
    if (typeof module.id !== 'string' || typeof module.title !== 'string' || typeof module.run !== 'function') {
      throw new Error(`${file} must export id, title and run(ctx)`);
    }
    const group = NAMED_FILES.includes(file) ? module.id : file.startsWith('peers/') ? 'peers' : 'rlock';
    scenarios.push({ id: module.id, title: module.title, group, run: module.run });
  }
  return scenarios;
}

/** `, at <commit>` of the monorepo (and whether packages/ had uncommitted changes), or '' outside git. */
function describeCommit() {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const head = spawnSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' });
  if (head.status !== 0) return '';
  const dirty = spawnSync('git', ['-C', root, 'status', '--porcelain', '--', 'packages'], { encoding: 'utf8' }).stdout.trim() !== '';
  return `, at commit ${head.stdout.trim()}${dirty ? ' (packages/ had uncommitted changes: rlock is its built dist as it was)' : ''}`;
}

/**
 * Installs the bench's own dev dependencies (the peers) into
 * scripts/bench/node_modules when one of them is missing. A failed install is
 * reported, not fatal: the rows of the peers that are missing say so.
 */
function installPeers() {
  const dir = fileURLToPath(new URL('.', import.meta.url));
  const manifest = JSON.parse(readFileSync(new URL('package.json', import.meta.url), 'utf8'));
  const missing = Object.keys(manifest.devDependencies ?? {}).filter((name) => !existsSync(new URL(`node_modules/${name}/package.json`, import.meta.url)));
  if (missing.length === 0) return;
  log(`installing the bench's dev dependencies (missing: ${missing.join(', ')}) into scripts/bench/node_modules`);
  const result = spawnSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund'], { stdio: ['ignore', 2, 2] });
  if (result.status !== 0)
    log(`npm install --prefix scripts/bench failed (${result.error?.message ?? `exit ${result.status}`}): missing peers are reported as not installed`);
}

const log = (/** @type {string} */ message) => process.stderr.write(`[bench] ${message}\n`);

// A library's stray rejection must not end the whole run: log it and go on.
process.on('unhandledRejection', (reason) => log(`unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`));

const scenarios = await loadScenarios();
const argv = process.argv.slice(2);
const jsonAt = argv.indexOf('--json');
/** Where `--json <file>` asks for the figures of every round, or undefined. */
const jsonFile = jsonAt === -1 ? undefined : argv[jsonAt + 1];
if (jsonAt !== -1 && (jsonFile === undefined || jsonFile.startsWith('--'))) {
  console.error('--json needs a file name');
  process.exit(1);
}
const args = argv.filter((_, i) => jsonAt === -1 || (i !== jsonAt && i !== jsonAt + 1)).map((arg) => arg.toLowerCase());
if (args.includes('--list')) {
  for (const s of scenarios) console.log(`${s.id}\t${s.group}\t${s.title}`);
  process.exit(0);
}
const unknown = args.filter((arg) => arg !== 'peers' && arg !== 'rlock' && !scenarios.some((s) => s.id === arg));
if (unknown.length > 0) {
  console.error(`unknown scenario(s): ${unknown.join(', ')}; available: peers, rlock, ${scenarios.map((s) => s.id).join(', ')}`);
  process.exit(1);
}
const selected = scenarios.filter((s) => (args.length > 0 ? args.includes(s.id) || args.includes(s.group) : s.group === 'peers' || s.group === 'rlock'));
if (selected.some((s) => s.group === 'peers')) installPeers();
const { LIBRARIES, versionOf } = await import('./peers/libraries.mjs');

/** @type {import('@org/rlock-testing').RedisFleet | undefined} */
let fleet;
/** @type {Redis | undefined} */
let admin;
const keyPrefix = `bench-${randomBytes(6).toString('hex')}`;
let stopping = false;

async function cleanUp() {
  if (stopping) return;
  stopping = true;
  if (admin) {
    // On a server we do not own, delete only this run's keys (SCAN, never FLUSH).
    if (!fleet) {
      let cursor = '0';
      do {
        const [next, keys] = await admin.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await admin.del(...keys);
      } while (cursor !== '0');
    }
    await admin.quit().catch(() => admin?.disconnect());
  }
  await fleet?.stop();
}
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => {
    log(`${signal}: stopping`);
    cleanUp().finally(() => process.exit(130));
  });
}

let exitCode = 0;
try {
  let url = process.env.REDIS_URL;
  // Before any server or worker starts: they inherit the mask, and startFleet moves the servers to their own core.
  if (url) noPinning("REDIS_URL: the server is not this run's");
  else pinSelf();
  if (!url) {
    fleet = await startFleet(1);
    url = fleet.url(0);
  }
  admin = new Redis(url);
  const roundsFromEnv = process.env.BENCH_ROUNDS ? intFromEnv('BENCH_ROUNDS', 3) : undefined;
  /** @type {BenchContext} */
  const ctx = {
    url,
    keyPrefix,
    warmupMs: intFromEnv('BENCH_WARMUP_MS', 1_000, 0),
    durationMs: intFromEnv('BENCH_DURATION_MS', 5_000),
    rounds: roundsFromEnv ?? 1,
    log,
  };

  const peers = selected.some((s) => s.group === 'peers');
  console.log(peers ? '# rlock beside the libraries users would pick instead\n' : '# rlock benchmarks\n');
  const machine = await describeMachine(admin);
  const runAt = new Date().toISOString();
  console.log(markdownTable(['machine', ''], machine, 'll'));
  console.log(
    `\nRun ${runAt}${describeCommit()}; Redis: ${process.env.REDIS_URL ? 'REDIS_URL (shared server)' : 'own RedisFleet server(s), no persistence'}; ` +
      `${describePinning()}.`,
  );
  if (peers) {
    const rows = LIBRARIES.map((library) => [library.name, library.pkg ? `${library.pkg} ${versionOf(library)}` : 'hand-written', library.driven]);
    console.log('\n' + markdownTable(['library', 'package', 'how the bench drives it (settings changed from its defaults, and why)'], rows, 'lll'));
  }

  for (const scenario of selected) {
    const started = performance.now();
    let body;
    try {
      body = await scenario.run({ ...ctx, rounds: roundsFromEnv ?? (scenario.group === 'peers' ? 3 : 1) });
    } catch (error) {
      exitCode = 1;
      body = `Could not run: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
    }
    console.log(`\n## ${scenario.title}\n\n${body}`);
    log(`${scenario.id} took ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  if (jsonFile) {
    const { recordedRounds } = await import('./peers/compare.mjs');
    const report = {
      runAt,
      commit: describeCommit(),
      machine: Object.fromEntries(machine),
      warmupMs: ctx.warmupMs,
      durationMs: ctx.durationMs,
      rounds: recordedRounds,
    };
    writeFileSync(jsonFile, JSON.stringify(report, null, 1) + '\n');
    log(`figures of ${recordedRounds.length} round(s) written to ${jsonFile}`);
  }
} finally {
  await cleanUp();
}
process.exit(exitCode);
