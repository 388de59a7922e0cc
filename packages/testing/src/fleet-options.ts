/** Where the fleet's servers run. */
export type RedisFleetBackend = 'auto' | 'process' | 'container';

/** How often Redis fsyncs the append-only file (`appendfsync`). */
export type RedisAppendFsync = 'always' | 'everysec' | 'no';

/** Options of {@link RedisFleet.start}. */
export interface RedisFleetOptions {
  /**
   * Number of independent masters (no replication between them).
   * An integer from 1 to 64.
   * @default 1
   */
  size?: number;
  /**
   * Start each server with `--appendonly yes`, so data written before a
   * `kill()` is there again after `restart()` (how much depends on
   * `appendfsync`). When false, servers also run with `--save ''`: no RDB
   * snapshot either, so a restart starts empty.
   * @default false
   */
  appendonly?: boolean;
  /**
   * `appendfsync` policy. `'always'` makes every acknowledged write survive a
   * SIGKILL; `'everysec'` may lose up to about a second of writes.
   * @default 'everysec'
   */
  appendfsync?: RedisAppendFsync;
  /**
   * `'process'` runs the local `redis-server` binary, `'container'` runs
   * `redis:7-alpine` through testcontainers, `'auto'` uses a container when a
   * Docker engine answers and the local binary otherwise. The environment
   * variable `RLOCK_FLEET_BACKEND` overrides `'auto'` (an explicit
   * `'process'` or `'container'` here wins over the variable).
   * @default 'auto'
   */
  backend?: RedisFleetBackend;
  /**
   * Path of the `redis-server` binary (process backend only).
   * @default the environment variable REDIS_SERVER, else 'redis-server' on PATH
   */
  redisServerPath?: string;
  /**
   * Extra `redis-server` arguments appended after the fleet's own, e.g.
   * `['--maxmemory', '10mb']`. They may override the fleet's settings, but not
   * `--port`, `--bind` or `--dir` without breaking the fleet.
   * @default []
   */
  extraArgs?: string[];
}

/** Options after defaults were applied and the backend was chosen. */
export interface ResolvedFleetOptions {
  readonly size: number;
  readonly appendonly: boolean;
  readonly appendfsync: RedisAppendFsync;
  readonly backend: RedisFleetBackend;
  readonly redisServerPath: string;
  readonly extraArgs: readonly string[];
}

/** Largest fleet accepted: a guard against a typo starting thousands of servers. */
export const MAX_FLEET_SIZE = 64;

/** Every default of {@link RedisFleetOptions} in one place. */
export const FLEET_DEFAULTS = Object.freeze({
  size: 1,
  appendonly: false,
  appendfsync: 'everysec',
  backend: 'auto',
  redisServerPath: 'redis-server',
  extraArgs: Object.freeze([] as string[]),
});

const BACKENDS: readonly RedisFleetBackend[] = ['auto', 'process', 'container'];
const FSYNC_POLICIES: readonly RedisAppendFsync[] = ['always', 'everysec', 'no'];

/**
 * Applies defaults and the environment (`RLOCK_FLEET_BACKEND`, `REDIS_SERVER`)
 * and checks every option once.
 * @throws TypeError or RangeError naming the bad option.
 */
export function resolveFleetOptions(options: RedisFleetOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedFleetOptions {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`RedisFleet options must be an object, got ${String(options)}`);
  }
  const size = options.size ?? FLEET_DEFAULTS.size;
  if (!Number.isInteger(size) || size < 1 || size > MAX_FLEET_SIZE) {
    throw new RangeError(`size must be an integer from 1 to ${MAX_FLEET_SIZE}, got ${String(size)}`);
  }
  const backend = resolveBackendChoice(options.backend, env);
  const { appendonly, appendfsync, redisServerPath, extraArgs } = resolveServerOptions(options, env);
  return Object.freeze({ size, appendonly, appendfsync, backend, redisServerPath, extraArgs });
}

/** The options every topology (fleet, cluster, sentinel group) shares: how each redis-server runs. */
export type ServerOptions = Pick<RedisFleetOptions, 'appendonly' | 'appendfsync' | 'redisServerPath' | 'extraArgs'>;

/** {@link ServerOptions} after defaults and the environment were applied. */
export type ResolvedServerOptions = Pick<ResolvedFleetOptions, 'appendonly' | 'appendfsync' | 'redisServerPath' | 'extraArgs'>;

/**
 * Applies the defaults of {@link FLEET_DEFAULTS} and `REDIS_SERVER` to the
 * options every topology shares, and checks them.
 * @throws TypeError or RangeError naming the bad option.
 */
export function resolveServerOptions(options: ServerOptions, env: NodeJS.ProcessEnv = process.env): ResolvedServerOptions {
  const appendonly = options.appendonly ?? FLEET_DEFAULTS.appendonly;
  if (typeof appendonly !== 'boolean') {
    throw new TypeError(`appendonly must be a boolean, got ${String(appendonly)}`);
  }
  const appendfsync = options.appendfsync ?? FLEET_DEFAULTS.appendfsync;
  if (!FSYNC_POLICIES.includes(appendfsync)) {
    throw new RangeError(`appendfsync must be one of ${FSYNC_POLICIES.join(', ')}, got ${String(appendfsync)}`);
  }
  const redisServerPath = options.redisServerPath ?? nonEmpty(env['REDIS_SERVER']) ?? FLEET_DEFAULTS.redisServerPath;
  if (typeof redisServerPath !== 'string' || redisServerPath === '') {
    throw new TypeError(`redisServerPath must be a non-empty string, got ${String(redisServerPath)}`);
  }
  const extraArgs = options.extraArgs ?? FLEET_DEFAULTS.extraArgs;
  if (!Array.isArray(extraArgs) || !extraArgs.every((arg) => typeof arg === 'string')) {
    throw new TypeError('extraArgs must be an array of strings');
  }
  return { appendonly, appendfsync, redisServerPath, extraArgs: Object.freeze([...extraArgs]) };
}

function resolveBackendChoice(option: RedisFleetBackend | undefined, env: NodeJS.ProcessEnv): RedisFleetBackend {
  if (option !== undefined && !BACKENDS.includes(option)) {
    throw new RangeError(`backend must be one of ${BACKENDS.join(', ')}, got ${String(option)}`);
  }
  if (option !== undefined && option !== 'auto') return option;
  const fromEnv = nonEmpty(env['RLOCK_FLEET_BACKEND']);
  if (fromEnv === undefined) return 'auto';
  if (!BACKENDS.includes(fromEnv as RedisFleetBackend)) {
    throw new RangeError(`RLOCK_FLEET_BACKEND must be one of ${BACKENDS.join(', ')}, got ${fromEnv}`);
  }
  return fromEnv as RedisFleetBackend;
}

export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/**
 * Checks that `value` is an integer from `min` to `max`.
 * @throws RangeError naming the option.
 */
export function integerIn(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}
