// @ts-check
/**
 * S1 with observability in its three states (issue 27: no SDK within 2 % of
 * none, an SDK with a reader within 10 %), one child process per run since a
 * loaded `@opentelemetry/api` or a registered provider cannot be undone:
 *
 * - absent: `@opentelemetry/api` cannot be loaded (`--import no-otel-api.mjs`)
 * - api: the api is installed, no provider registered (the default install)
 * - sdk: MeterProvider + a reader collecting every second + TracerProvider
 *   with an in-memory exporter (`--import otel-sdk.mjs`)
 * - floor: no global provider (rlock records nothing), while the loop itself
 *   records the two histogram measurements a pair costs (acquire and hold
 *   duration, the same attributes and buckets) into an SDK MeterProvider of
 *   its own with the same reader: what the SDK alone adds, which no change in
 *   rlock can go below
 * - baseline (only with BENCH_RLOCK_BASELINE=<a built checkout>, as the
 *   peer comparison takes it): e.g. the last commit before observability
 *
 * Each child runs S1's loop (64 tasks, each lock(key i, leaseMs 10 s) +
 * unlock) for warm-up + window and reports the pairs and its own CPU time in
 * the window. Rounds interleave the variants in a rotating order; the figures
 * are medians over rounds with their range, and per-round ratios to `absent`.
 * Client CPU per pair is the steadier figure on a small shared machine:
 * pairs/s moves with whatever else the machine runs.
 *
 *   node scripts/bench/run.mjs telemetry          # BENCH_ROUNDS (default 5 here)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './stats.mjs';
import { markdownTable, num } from './table.mjs';

export const id = 'telemetry';
export const title = 'telemetry (rlock only) — S1 with @opentelemetry/api absent, present without a provider, and with an SDK';

const CONCURRENCY = 64;
const LEASE_MS = 10_000;
const MIN_ROUNDS = 5;

/**
 * @typedef {object} ChildResult
 * @property {number} pairs completed inside the window
 * @property {number} windowMs
 * @property {number} cpuUs client CPU (user + system) in the window, µs
 * @property {number} errors
 * @property {string} [firstError]
 * @property {number} [recorded] sdk: acquisitions the SDK's reader saw (a check that it recorded)
 */

/**
 * @typedef {object} Variant
 * @property {string} key
 * @property {string} label
 * @property {string[]} nodeArgs
 * @property {string} module what the child imports createClient from
 */

/** @returns {Variant[]} */
function variants() {
  const here = (/** @type {string} */ file) => fileURLToPath(new URL(file, import.meta.url));
  /** @type {Variant[]} */
  const list = [
    { key: 'absent', label: '@opentelemetry/api not loadable', nodeArgs: ['--import', here('./no-otel-api.mjs')], module: '@org/rlock' },
    { key: 'api', label: 'api installed, no provider', nodeArgs: [], module: '@org/rlock' },
    { key: 'sdk', label: 'SDK: MeterProvider + reader (1 s) + TracerProvider', nodeArgs: ['--import', here('./otel-sdk.mjs')], module: '@org/rlock' },
    { key: 'floor', label: "floor: the SDK's 2 histogram records per pair alone, made by the loop", nodeArgs: [], module: '@org/rlock' },
  ];
  const baseline = process.env.BENCH_RLOCK_BASELINE?.replace(/\/$/, '');
  if (baseline)
    list.unshift({ key: 'baseline', label: `baseline build (${baseline})`, nodeArgs: [], module: `file://${baseline}/packages/rlock/dist/esm/index.js` });
  return list;
}

/**
 * @param {Variant} variant
 * @param {import('./run.mjs').BenchContext} ctx
 * @param {string[]} [extraArgs] node options before the script
 * @returns {Promise<ChildResult>}
 */
function runChild(variant, ctx, extraArgs = []) {
  const args = [...extraArgs, ...variant.nodeArgs, fileURLToPath(import.meta.url)];
  const env = {
    ...process.env,
    TELEMETRY_CHILD: JSON.stringify({
      url: ctx.url,
      keyPrefix: `${ctx.keyPrefix}-${variant.key}`,
      warmupMs: ctx.warmupMs,
      durationMs: ctx.durationMs,
      module: variant.module,
      sdk: variant.key === 'sdk',
      floor: variant.key === 'floor',
    }),
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0) reject(new Error(`${variant.key}: child exited ${code}: ${out.trim()}`));
      else resolve(JSON.parse(line));
    });
  });
}

/**
 * @param {import('./run.mjs').BenchContext} ctx
 * @returns {Promise<string>} the section's Markdown
 */
export async function run(ctx) {
  const list = variants();
  const rounds = Math.max(ctx.rounds, MIN_ROUNDS);
  /** @type {Map<string, ChildResult[]>} */
  const results = new Map(list.map((v) => [v.key, []]));
  for (let round = 0; round < rounds; round++) {
    // Rotate the order each round, so no variant always runs first (or right after another).
    const order = list.map((_, i) => /** @type {Variant} */ (list[(i + round) % list.length]));
    for (const variant of order) {
      ctx.log(`telemetry: ${variant.key} (round ${round + 1}/${rounds})`);
      results.get(variant.key)?.push(await runChild(variant, ctx));
    }
  }

  const rate = (/** @type {ChildResult} */ r) => r.pairs / (r.windowMs / 1000);
  const cpu = (/** @type {ChildResult} */ r) => r.cpuUs / (r.pairs || 1);
  const spread = (/** @type {number[]} */ values, /** @type {number} */ digits) =>
    `${num(median(values), digits)} (${num(Math.min(...values), digits)}–${num(Math.max(...values), digits)})`;
  const reference = /** @type {ChildResult[]} */ (results.get('absent'));
  /** @param {ChildResult[]} runs @param {(r: ChildResult) => number} figure per-round ratio to `absent`'s same round */
  const ratios = (runs, figure) => runs.map((r, i) => figure(r) / figure(/** @type {ChildResult} */ (reference[i])));
  const rows = list.map((variant) => {
    const runs = /** @type {ChildResult[]} */ (results.get(variant.key));
    const rateRatios = ratios(runs, rate);
    const cpuRatios = ratios(runs, cpu);
    return [
      variant.label,
      spread(runs.map(rate), 0),
      spread(rateRatios, 3),
      spread(runs.map(cpu), 1),
      spread(cpuRatios, 3),
      variant.key === 'sdk' ? String(median(runs.map((r) => r.recorded ?? 0))) : '',
      String(runs.reduce((sum, r) => sum + r.errors, 0)),
    ];
  });
  const profiled = [];
  for (const key of ['api', 'sdk', 'floor']) {
    const variant = /** @type {Variant} */ (list.find((v) => v.key === key));
    ctx.log(`telemetry: ${key}, profiled`);
    profiled.push([variant.label, ...(await profile(variant, ctx))]);
  }
  const firstError = [...results.values()].flat().find((r) => r.firstError)?.firstError;
  return [
    markdownTable(['variant', 'pairs/s', 'pairs/s ÷ absent', 'client CPU µs/pair', 'CPU/pair ÷ absent', 'acquisitions recorded', 'errors'], rows, 'lrrrrrr'),
    '',
    `Median over ${rounds} rounds (min–max in brackets), the variants interleaved in a rotating order; ratios are taken ` +
      `within each round, then their median. Each run is a fresh process: ${CONCURRENCY} tasks, each lock(key i, leaseMs ${LEASE_MS}) + unlock, ` +
      `${ctx.warmupMs} ms warm-up then ${ctx.durationMs} ms measured. Client CPU is the process's user + system time over the window ` +
      'divided by the pairs completed in it. "acquisitions recorded": the count of rlock.acquire.duration the reader collected after the run. ' +
      '"floor": no global provider, so rlock records nothing, while the loop records the two histogram measurements a pair must make ' +
      '(acquire and hold duration, the same attributes and buckets) into an SDK MeterProvider of its own: what the SDK alone costs per pair.',
    '',
    markdownTable(['variant, one more run under --cpu-prof', 'observability share of client CPU', 'µs per pair'], profiled, 'lrr'),
    '',
    "The profiled run's samples (module loading left out) whose stack passes through rlock's observability code " +
      '(packages/core/…/observability/, the SDK calls it makes included) or the OpenTelemetry SDK (its reader), over all busy samples: ' +
      'a share within one process, so it holds still while other work on the machine moves pairs/s and CPU per pair. ' +
      "It leaves out what is not in those frames: the garbage collector's share of their allocations.",
    ...(firstError ? ['', `First error: ${firstError}`] : []),
  ].join('\n');
}

/**
 * One run of `variant` under --cpu-prof: the share of its busy CPU samples
 * spent in observability frames, and that time per pair.
 * @param {Variant} variant
 * @param {import('./run.mjs').BenchContext} ctx
 * @returns {Promise<[string, string]>}
 */
async function profile(variant, ctx) {
  const dir = mkdtempSync(join(tmpdir(), 'rlock-telemetry-prof-'));
  try {
    const result = await runChild(variant, ctx, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
    const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
    if (file === undefined) return ['no profile', ''];
    /** @type {{ nodes: { id: number, callFrame: { functionName: string, url: string }, children?: number[] }[], samples: number[], timeDeltas: number[] }} */
    const prof = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    const byId = new Map(prof.nodes.map((node) => [node.id, node]));
    /** @type {Map<number, number>} */
    const parent = new Map();
    for (const node of prof.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
    /** @type {Map<number, 'observability' | 'loading' | 'other'>} */
    const kindOf = new Map();
    const classify = (/** @type {number} */ id) => {
      const known = kindOf.get(id);
      if (known) return known;
      const frame = /** @type {{ callFrame: { functionName: string, url: string } }} */ (byId.get(id)).callFrame;
      const up = parent.get(id);
      /** @type {'observability' | 'loading' | 'other'} */
      let kind = up === undefined ? 'other' : classify(up);
      if (kind === 'other' && /\/observability\/|@opentelemetry\//.test(frame.url)) kind = 'observability';
      if (/internal\/modules\/|wrapSafe/.test(frame.url + frame.functionName)) kind = 'loading';
      kindOf.set(id, kind);
      return kind;
    };
    let busy = 0;
    let observability = 0;
    prof.samples.forEach((id, i) => {
      const node = /** @type {{ callFrame: { functionName: string } }} */ (byId.get(id));
      const delta = prof.timeDeltas[i] ?? 0;
      const kind = classify(id);
      if (node.callFrame.functionName === '(idle)' || kind === 'loading') return;
      busy += delta;
      if (kind === 'observability') observability += delta;
    });
    // The profile spans the whole run, warm-up included: per pair, over the pairs of the whole run.
    const runPairs = result.pairs * ((ctx.warmupMs + ctx.durationMs) / ctx.durationMs);
    return [`${((observability / (busy || 1)) * 100).toFixed(1)} %`, `${num(observability / runPairs, 2)} µs`];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The child: S1's loop in this process, one JSON line on stdout. */
async function child(/** @type {string} */ raw) {
  const options = JSON.parse(raw);
  /** @type {typeof import('@org/rlock')} */
  const { createClient } = await import(options.module);
  const client = createClient({ redis: options.url, keyPrefix: options.keyPrefix });
  client.on('error', () => undefined);
  const locks = Array.from({ length: CONCURRENCY }, (_, i) => client.getLock(`s1:${i}`));
  const lease = { leaseMs: LEASE_MS };
  const record = options.floor ? await floorRecorder() : undefined;
  let pairs = 0;
  let errors = 0;
  /** @type {string | undefined} */
  let firstError;
  const start = performance.now();
  const end = start + options.warmupMs + options.durationMs;
  /** @type {{ pairs: number, at: number, cpu: NodeJS.CpuUsage }} */
  let from = { pairs: 0, at: start, cpu: process.cpuUsage() };
  /** @type {typeof from | undefined} */
  let to;
  const opened = setTimeout(() => (from = { pairs, at: performance.now(), cpu: process.cpuUsage() }), options.warmupMs);
  const closed = setTimeout(() => (to = { pairs, at: performance.now(), cpu: process.cpuUsage() }), options.warmupMs + options.durationMs);
  await Promise.all(
    locks.map((lock) =>
      client.task(async () => {
        while (performance.now() < end) {
          try {
            if (record === undefined) {
              await lock.lock(lease);
              await lock.unlock();
            } else {
              const called = performance.now();
              await lock.lock(lease);
              const held = performance.now();
              record.acquired((held - called) / 1000);
              await lock.unlock();
              record.released((performance.now() - held) / 1000);
            }
            pairs++;
          } catch (error) {
            errors++;
            firstError ??= error instanceof Error ? `${error.name}: ${error.message}` : String(error);
          }
        }
      }),
    ),
  );
  clearTimeout(opened);
  clearTimeout(closed);
  to ??= { pairs, at: performance.now(), cpu: process.cpuUsage() };
  const used = process.cpuUsage(from.cpu);
  const late = process.cpuUsage(to.cpu);
  /** @type {ChildResult} */
  const result = {
    pairs: to.pairs - from.pairs,
    windowMs: to.at - from.at,
    cpuUs: used.user + used.system - (late.user + late.system),
    errors,
    ...(firstError ? { firstError } : {}),
  };
  await client.close();
  if (options.sdk) result.recorded = await recordedAcquisitions();
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

/**
 * The floor variant's two measurements per pair: histograms made as rlock
 * makes them (seconds, its buckets as advice), recorded with frozen attribute
 * sets as rlock does, into a MeterProvider that is not the global one (so rlock
 * records nothing) with a reader like otel-sdk.mjs's.
 */
async function floorRecorder() {
  const { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } = await import('@opentelemetry/sdk-metrics');
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 1_000 });
  const meter = new MeterProvider({ readers: [reader] }).getMeter('rlock-bench-floor');
  const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
  const seconds = { unit: 's', advice: { explicitBucketBoundaries: buckets } };
  const acquire = meter.createHistogram('rlock.acquire.duration', seconds);
  const hold = meter.createHistogram('rlock.hold.duration', seconds);
  const acquired = Object.freeze({ 'rlock.object': 'lock', 'rlock.outcome': 'acquired' });
  const released = Object.freeze({ 'rlock.object': 'lock', 'rlock.end': 'released' });
  process.once('beforeExit', () => void reader.shutdown());
  return {
    acquired: (/** @type {number} */ s) => acquire.record(s, acquired),
    released: (/** @type {number} */ s) => hold.record(s, released),
  };
}

/** How many acquisitions the SDK's reader has seen (otel-sdk.mjs, loaded by --import: the same module instance). */
async function recordedAcquisitions() {
  const { exporter, reader } = await import('./otel-sdk.mjs');
  exporter.reset();
  await reader.forceFlush();
  let count = 0;
  for (const resource of exporter.getMetrics())
    for (const scope of resource.scopeMetrics)
      for (const metric of scope.metrics)
        if (metric.descriptor.name === 'rlock.acquire.duration')
          for (const point of metric.dataPoints) count += /** @type {{ count: number }} */ (point.value).count;
  return count;
}

if (process.env.TELEMETRY_CHILD) await child(process.env.TELEMETRY_CHILD);
