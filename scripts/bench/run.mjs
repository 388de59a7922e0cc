// @ts-check
/**
 * Runs the benchmarks and prints a Markdown report (machine, then one section per
 * scenario). Progress goes to stderr, the report to stdout.
 *
 *   npm run bench                 # every scenario
 *   npm run bench -- s2           # only the ones named (s1, s2, …)
 *   npm run bench -- --list
 *   BENCH_DURATION_MS=10000 BENCH_WARMUP_MS=2000 BENCH_ROUNDS=3 npm run bench
 *   REDIS_URL=redis://host:port npm run bench   # an existing server instead of a RedisFleet
 *
 * A scenario is a file `s<N>-<topic>.mjs` next to this one exporting `id`,
 * `title` and `run(ctx: BenchContext): Promise<string>` (its Markdown section).
 * Adding one is adding a file. Benchmarks print numbers; they never fail on a
 * timing (exit 1 only when a scenario could not run at all).
 */
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { Redis } from 'ioredis';
import { RedisFleet } from '@org/rlock-testing';
import { describeMachine } from './machine.mjs';
import { markdownTable } from './table.mjs';

/**
 * @typedef {object} BenchContext What every scenario gets.
 * @property {string} url the Redis server under test
 * @property {string} keyPrefix unique to this run, no braces: scenarios put every key they create under it
 * @property {number} warmupMs before each measured window
 * @property {number} durationMs of each measured window
 * @property {number} rounds how many times a scenario repeats its variants (interleaved), reporting the median
 * @property {(message: string) => void} log progress, to stderr
 */

/**
 * @typedef {object} Scenario
 * @property {string} id e.g. `s1`
 * @property {string} title
 * @property {(ctx: BenchContext) => Promise<string>} run
 */

/** @param {string} name @param {number} fallback @param {number} [min] */
function intFromEnv(name, fallback, min = 1) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min}, got ${raw}`);
  return value;
}

/** @returns {Promise<Scenario[]>} every s<N>-*.mjs here, in N order */
async function loadScenarios() {
  const files = readdirSync(new URL('.', import.meta.url))
    .filter((file) => /^s\d+-.+\.mjs$/.test(file))
    .sort((a, b) => Number(/^s(\d+)/.exec(a)?.[1]) - Number(/^s(\d+)/.exec(b)?.[1]));
  /** @type {Scenario[]} */
  const scenarios = [];
  for (const file of files) {
    const module = await import(new URL(file, import.meta.url).href);
    if (typeof module.id !== 'string' || typeof module.title !== 'string' || typeof module.run !== 'function') {
      throw new Error(`${file} must export id, title and run(ctx)`);
    }
    scenarios.push({ id: module.id, title: module.title, run: module.run });
  }
  return scenarios;
}

const log = (/** @type {string} */ message) => process.stderr.write(`[bench] ${message}\n`);

const scenarios = await loadScenarios();
const args = process.argv.slice(2);
if (args.includes('--list')) {
  for (const s of scenarios) console.log(`${s.id}\t${s.title}`);
  process.exit(0);
}
const unknown = args.filter((arg) => !scenarios.some((s) => s.id === arg.toLowerCase()));
if (unknown.length > 0) {
  console.error(`unknown scenario(s): ${unknown.join(', ')}; available: ${scenarios.map((s) => s.id).join(', ')}`);
  process.exit(1);
}
const selected = args.length > 0 ? scenarios.filter((s) => args.some((arg) => arg.toLowerCase() === s.id)) : scenarios;

/** @type {RedisFleet | undefined} */
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
  if (!url) {
    fleet = await RedisFleet.start({ size: 1 });
    url = fleet.url(0);
  }
  admin = new Redis(url);
  /** @type {BenchContext} */
  const ctx = {
    url,
    keyPrefix,
    warmupMs: intFromEnv('BENCH_WARMUP_MS', 1_000, 0),
    durationMs: intFromEnv('BENCH_DURATION_MS', 5_000),
    rounds: intFromEnv('BENCH_ROUNDS', 1),
    log,
  };

  console.log('# rlock benchmarks\n');
  console.log(markdownTable(['machine', ''], await describeMachine(admin), 'll'));
  console.log(`\nRedis: ${process.env.REDIS_URL ? 'REDIS_URL (shared server)' : 'own RedisFleet server'}; run ${new Date().toISOString()}`);

  for (const scenario of selected) {
    const started = performance.now();
    let body;
    try {
      body = await scenario.run(ctx);
    } catch (error) {
      exitCode = 1;
      body = `Could not run: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
    }
    console.log(`\n## ${scenario.title}\n\n${body}`);
    log(`${scenario.id} took ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
} finally {
  await cleanUp();
}
process.exit(exitCode);
