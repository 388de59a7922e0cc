import { execFile } from 'node:child_process';

/** A `redis-server` binary found on this machine. */
export interface RedisServerBinary {
  readonly path: string;
  /** e.g. `'7.0.15'` */
  readonly version: string;
  readonly major: number;
  readonly minor: number;
}

const probes = new Map<string, Promise<RedisServerBinary>>();

/**
 * Runs `<path> --version` once per path and process, to fail early with a
 * useful message when the binary is missing, and to learn which flags it
 * takes (`--enable-debug-command` exists from 7.0, `CLIENT PAUSE … ALL`
 * from 6.2).
 * @throws Error naming REDIS_SERVER and the container backend when the binary cannot be run.
 */
export function probeRedisServer(path: string): Promise<RedisServerBinary> {
  let probe = probes.get(path);
  if (probe === undefined) {
    probe = runVersion(path);
    probes.set(path, probe);
    // A failed probe is not cached: the binary may be installed later.
    probe.catch(() => probes.delete(path));
  }
  return probe;
}

function runVersion(path: string): Promise<RedisServerBinary> {
  return new Promise((resolve, reject) => {
    execFile(path, ['--version'], { timeout: 10_000 }, (error, stdout) => {
      if (error) {
        reject(
          new Error(
            `cannot run redis-server at '${path}' (${error.message}); install Redis, set REDIS_SERVER or ` +
              `the redisServerPath option, or use backend 'container' with a Docker engine`,
            { cause: error },
          ),
        );
        return;
      }
      // "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=…"
      const match = /v=(\d+)\.(\d+)\.(\d+)/.exec(stdout);
      if (match === null) {
        reject(new Error(`'${path} --version' printed no Redis version: ${stdout.trim()}`));
        return;
      }
      resolve({ path, version: `${match[1]}.${match[2]}.${match[3]}`, major: Number(match[1]), minor: Number(match[2]) });
    });
  });
}
