// @ts-check
/** What the numbers were measured on: printed at the top of every report. */
import { cpus, freemem, loadavg, platform, release, totalmem } from 'node:os';
import { createRequire } from 'node:module';

/**
 * @param {import('ioredis').Redis} redis a connection to the server under test
 * @returns {Promise<Array<[string, string]>>} label, value
 */
export async function describeMachine(redis) {
  const cpuList = cpus();
  const info = parseInfo(await redis.info('server'));
  const require = createRequire(import.meta.url);
  /** @param {string} name */
  const versionOf = (name) => {
    try {
      return /** @type {{ version: string }} */ (require(`${name}/package.json`)).version;
    } catch {
      return 'unknown';
    }
  };
  return [
    ['CPU', `${cpuList[0]?.model.trim() ?? 'unknown'}`],
    ['cores', String(cpuList.length)],
    ['memory', `${(totalmem() / 2 ** 30).toFixed(1)} GiB (${(freemem() / 2 ** 30).toFixed(1)} GiB free)`],
    ['OS', `${platform()} ${release()}`],
    [
      'load average at start',
      loadavg()
        .map((l) => l.toFixed(2))
        .join(', ') + ' (1, 5, 15 min): other work on the machine skews the numbers',
    ],
    ['Node', process.version],
    ['redis-server', `${info.redis_version ?? 'unknown'} (${info.arch_bits ?? '?'}-bit, ${info.multiplexing_api ?? '?'}, same host)`],
    ['ioredis', versionOf('ioredis')],
    ['@org/rlock', versionOf('@org/rlock')],
  ];
}

/**
 * `INFO` text → field map.
 * @param {string} text
 * @returns {Record<string, string>}
 */
export function parseInfo(text) {
  /** @type {Record<string, string>} */
  const fields = {};
  for (const line of text.split('\r\n')) {
    const at = line.indexOf(':');
    if (at > 0 && !line.startsWith('#')) fields[line.slice(0, at)] = line.slice(at + 1);
  }
  return fields;
}
