#!/usr/bin/env node
// Starts real Redis servers by hand, for demos, examples and manual tests,
// and keeps them up until Ctrl-C (SIGINT) or SIGTERM, then tears them down.
//
//   npm run redis:fleet                        # builds, then 1 standalone + 5 masters
//   node scripts/redis-fleet.mjs --masters 3 --no-standalone
//   node scripts/redis-fleet.mjs --standalone-only --appendonly
//
// stdout is machine-readable: one URL per line (the standalone first, then
// the masters), then REDIS_URL=… and REDLOCK_MASTERS=… lines. Progress goes to
// stderr. Servers die with this process even if it is killed (see the
// @org/rlock-testing README), and never use port 6379.
import { parseArgs } from 'node:util';

const HELP = `Usage: node scripts/redis-fleet.mjs [options]

Starts independent redis-server processes (or containers) on free ports and
keeps them up until SIGINT/SIGTERM.

Options:
  --masters <n>          independent masters for Redlock (default 5; 0 for none)
  --no-standalone        do not start the standalone server
  --standalone-only      only the standalone server (same as --masters 0)
  --appendonly           start servers with --appendonly yes
  --appendfsync <p>      always | everysec | no (default everysec)
  --backend <b>          auto | process | container (default auto, or RLOCK_FLEET_BACKEND)
  -h, --help             show this help

Output (stdout): one URL per line, then
  REDIS_URL=<standalone URL, or the first master without a standalone>
  REDLOCK_MASTERS=<master URLs, comma-separated>
`;

function fail(message) {
  process.stderr.write(`redis-fleet: ${message}\n\n${HELP}`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      masters: { type: 'string' },
      'no-standalone': { type: 'boolean' },
      'standalone-only': { type: 'boolean' },
      appendonly: { type: 'boolean' },
      appendfsync: { type: 'string' },
      backend: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  }));
} catch (error) {
  fail(error.message);
}
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

const masters = values['standalone-only'] ? 0 : Number(values.masters ?? 5);
if (!Number.isInteger(masters) || masters < 0 || masters > 64) fail(`--masters must be an integer from 0 to 64, got ${values.masters}`);
if (values['standalone-only'] && values.masters !== undefined) fail('--standalone-only and --masters exclude each other');
const standalone = !values['no-standalone'];
if (!standalone && masters === 0) fail('nothing to start: --no-standalone with no masters');

let RedisFleet;
try {
  ({ RedisFleet } = await import('@org/rlock-testing'));
} catch (error) {
  fail(`cannot load @org/rlock-testing (${error.message}); run \`npm run build\` first`);
}

const common = {
  appendonly: values.appendonly ?? false,
  ...(values.appendfsync !== undefined && { appendfsync: values.appendfsync }),
  ...(values.backend !== undefined && { backend: values.backend }),
};

const fleets = [];
let stopping;
function stopAll() {
  stopping ??= Promise.allSettled(fleets.map((fleet) => fleet.stop()));
  return stopping;
}

let signalled = false;
async function onSignal(signal) {
  if (signalled) {
    // A second Ctrl-C: exit now; process 'exit' and the supervisors still kill the servers.
    process.exit(130);
  }
  signalled = true;
  process.stderr.write(`redis-fleet: ${signal}, stopping…\n`);
  const results = await stopAll();
  const failed = results.filter((result) => result.status === 'rejected');
  for (const result of failed) process.stderr.write(`redis-fleet: ${result.reason?.message ?? result.reason}\n`);
  process.exit(failed.length > 0 ? 1 : 0);
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, onSignal);

let standaloneFleet;
let masterFleet;
try {
  const starting = [
    standalone ? RedisFleet.start({ ...common, size: 1 }).then((fleet) => fleets.push((standaloneFleet = fleet))) : undefined,
    masters > 0 ? RedisFleet.start({ ...common, size: masters }).then((fleet) => fleets.push((masterFleet = fleet))) : undefined,
  ];
  const results = await Promise.allSettled(starting);
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
} catch (error) {
  await stopAll();
  process.stderr.write(`redis-fleet: could not start the servers: ${error?.stack ?? error}\n`);
  process.exit(1);
}

const masterUrls = masterFleet?.urls() ?? [];
const urls = [...(standaloneFleet?.urls() ?? []), ...masterUrls];
const lines = [...urls, `REDIS_URL=${standaloneFleet?.url() ?? masterUrls[0]}`];
if (masterUrls.length > 0) lines.push(`REDLOCK_MASTERS=${masterUrls.join(',')}`);
process.stdout.write(`${lines.join('\n')}\n`);
const backend = (standaloneFleet ?? masterFleet).backend;
process.stderr.write(`redis-fleet: ${urls.length} server(s) up (${backend} backend${standalone ? ', standalone first' : ''}); Ctrl-C to stop\n`);

// The fleet's own handles never keep the process alive: this timer does.
setInterval(() => undefined, 1 << 30);
