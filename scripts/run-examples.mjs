// @ts-check
/**
 * Runs every examples/<name>/main.mjs in turn, each as its own process with a
 * time limit, and exits 1 if any of them fails (non-zero exit, signal, or
 * timeout). CI runs it through `npm run examples` (which builds first).
 *
 *   node scripts/run-examples.mjs                # all examples
 *   node scripts/run-examples.mjs flash-sale     # only the ones named
 *   EXAMPLE_TIMEOUT_MS=60000 node scripts/run-examples.mjs
 *
 * Each example runs in its own process group, so on a timeout the example, the
 * workers it forked and any redis-server it started are stopped together:
 * SIGTERM first (examples stop their RedisFleet on it), SIGKILL after a grace.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const examplesDir = fileURLToPath(new URL('../examples/', import.meta.url));
const timeoutMs = Number(process.env.EXAMPLE_TIMEOUT_MS ?? 180_000);
const killGraceMs = 5_000;

/**
 * @typedef {object} Outcome
 * @property {string} name
 * @property {boolean} ok
 * @property {string} detail
 * @property {number} ms
 */

/** @returns {string[]} example names, sorted */
function findExamples() {
  return readdirSync(examplesDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(examplesDir, entry.name, 'main.mjs')))
    .map((entry) => entry.name)
    .sort();
}

/**
 * Signals the whole process group of `pid`; ignores a group that is already gone.
 * @param {number} pid @param {NodeJS.Signals} signal
 */
function signalGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    // already exited
  }
}

/** @type {Set<number>} process groups still running, stopped if we are interrupted */
const running = new Set();
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => {
    for (const pid of running) signalGroup(pid, 'SIGTERM');
    setTimeout(() => {
      for (const pid of running) signalGroup(pid, 'SIGKILL');
      process.exit(130);
    }, killGraceMs).unref();
  });
}

/**
 * @param {string} name
 * @returns {Promise<Outcome>}
 */
function runExample(name) {
  const started = performance.now();
  const child = spawn(process.execPath, [join(examplesDir, name, 'main.mjs')], {
    cwd: join(examplesDir, '..'),
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true, // own process group: a timeout stops its workers and servers too
  });
  const pid = /** @type {number} */ (child.pid);
  running.add(pid);
  let timedOut = false;
  /** @type {NodeJS.Timeout | undefined} */
  let killTimer;
  const timer = setTimeout(() => {
    timedOut = true;
    console.error(`\n[run-examples] ${name}: no exit after ${timeoutMs} ms, sending SIGTERM`);
    signalGroup(pid, 'SIGTERM');
    killTimer = setTimeout(() => signalGroup(pid, 'SIGKILL'), killGraceMs);
  }, timeoutMs);

  return new Promise((resolve) => {
    child.on('error', (error) => {
      clearTimeout(timer);
      running.delete(pid);
      resolve({ name, ok: false, detail: `could not start: ${error.message}`, ms: performance.now() - started });
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      // The example is gone; make sure nothing it started outlives it.
      signalGroup(pid, 'SIGTERM');
      if (killTimer) clearTimeout(killTimer);
      running.delete(pid);
      const ms = performance.now() - started;
      if (timedOut) resolve({ name, ok: false, detail: `timed out after ${timeoutMs} ms`, ms });
      else if (signal) resolve({ name, ok: false, detail: `killed by ${signal}`, ms });
      else resolve({ name, ok: code === 0, detail: `exit code ${code}`, ms });
    });
  });
}

const available = findExamples();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !available.includes(name));
if (unknown.length > 0) {
  console.error(`unknown example(s): ${unknown.join(', ')}; available: ${available.join(', ')}`);
  process.exit(1);
}
const names = wanted.length > 0 ? wanted : available;
if (names.length === 0) {
  console.error(`no examples/*/main.mjs found in ${examplesDir}`);
  process.exit(1);
}

/** @type {Outcome[]} */
const outcomes = [];
for (const name of names) {
  console.log(`\n=== example: ${name} ===\n`);
  const outcome = await runExample(name);
  outcomes.push(outcome);
  console.log(`\n=== ${name}: ${outcome.ok ? 'PASS' : 'FAIL'} (${outcome.detail}, ${(outcome.ms / 1000).toFixed(1)} s) ===`);
}

console.log('\n| example | result | detail | time |');
console.log('| --- | --- | --- | ---: |');
for (const o of outcomes) console.log(`| ${o.name} | ${o.ok ? 'PASS' : 'FAIL'} | ${o.detail} | ${(o.ms / 1000).toFixed(1)} s |`);
const failed = outcomes.filter((o) => !o.ok);
console.log(failed.length === 0 ? `\nall ${outcomes.length} example(s) passed` : `\n${failed.length} of ${outcomes.length} example(s) failed`);
process.exit(failed.length === 0 ? 0 : 1);
