// @ts-check
/**
 * What rlock's observability adds to one uncontended lock + unlock pair, in
 * CPU time and without Redis: the calls the engine makes for a pair (an
 * acquisition's probe, its end with the hold, the hold's end), repeated.
 * S1's pairs cost tens of µs of client CPU each on a shared machine whose
 * noise hides a 2 % change; this isolates the part this feature adds.
 *
 *   node scripts/bench/telemetry-overhead.mjs            # no SDK registered
 *   node --import ./scripts/bench/otel-sdk.mjs scripts/bench/telemetry-overhead.mjs
 */
import { loadOtelApi } from '@org/rlock-core/internal';
import { Telemetry } from '../../packages/core/dist/esm/observability/telemetry.js';

const api = await loadOtelApi();
const telemetry = new Telemetry(undefined);
const PAIRS = 200_000;

function pairs(count) {
  for (let i = 0; i < count; i++) {
    const hold = {};
    const probe = telemetry.startAcquire('lock', 'order:42', 'client:task', 'timeout', undefined);
    if (probe !== undefined) {
      probe.end('acquired', hold);
      telemetry.holdEnded(hold, 'released');
    }
  }
}

pairs(20_000); // warm-up: let the JIT settle
const runs = [];
for (let run = 0; run < 5; run++) {
  const started = process.cpuUsage();
  pairs(PAIRS);
  const used = process.cpuUsage(started);
  runs.push(((used.user + used.system) * 1000) / PAIRS); // ns per pair
}
runs.sort((a, b) => a - b);
console.log(
  `api ${api ? 'loaded' : 'absent'}; per pair: median ${runs[2].toFixed(0)} ns of CPU (min ${runs[0].toFixed(0)}, max ${runs[4].toFixed(0)}), ${PAIRS} pairs × 5 runs`,
);
