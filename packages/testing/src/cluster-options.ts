import { integerIn, nonEmpty, resolveServerOptions, type ResolvedServerOptions, type ServerOptions } from './fleet-options.js';

/** Options of {@link RedisCluster.start}. */
export interface RedisClusterOptions extends ServerOptions {
  /**
   * Number of masters the 16384 slots are split across (`redis-cli --cluster
   * create` needs at least 3). An integer from 3 to 16.
   * @default 3
   */
  masters?: number;
  /**
   * Replicas of each master (`--cluster-replicas`): with 0 a killed master's
   * slots stay down until it is restarted. An integer from 0 to 4.
   * @default 1
   */
  replicasPerMaster?: number;
  /**
   * `cluster-node-timeout`: how long a node may go unanswered before it is
   * suspected, and so roughly how long a failover takes to start. Small by
   * default so fault tests stay fast; raise it on a heavily loaded machine
   * if nodes are failed over without being killed. An integer ≥ 100.
   * @default 1000
   */
  nodeTimeoutMs?: number;
  /**
   * Bound on each wait of the cluster: `start()` until every node says
   * `cluster_state:ok` and every replica has synced, `waitForFailover()` and
   * `restart()` (both also take their own `timeoutMs`). An integer ≥ 1000.
   * @default 30000
   */
  waitTimeoutMs?: number;
  /**
   * Path of the `redis-cli` binary that runs `--cluster create`.
   * @default the environment variable REDIS_CLI, else 'redis-cli' on PATH
   */
  redisCliPath?: string;
}

/** Options after defaults were applied. */
export interface ResolvedClusterOptions extends ResolvedServerOptions {
  readonly masters: number;
  readonly replicasPerMaster: number;
  readonly nodeTimeoutMs: number;
  readonly waitTimeoutMs: number;
  readonly redisCliPath: string;
}

/** Every default of {@link RedisClusterOptions} beyond the shared server options (FLEET_DEFAULTS). */
export const CLUSTER_DEFAULTS = Object.freeze({
  masters: 3,
  replicasPerMaster: 1,
  nodeTimeoutMs: 1_000,
  waitTimeoutMs: 30_000,
  redisCliPath: 'redis-cli',
});

/**
 * Applies defaults and the environment (`REDIS_SERVER`, `REDIS_CLI`) and
 * checks every option once.
 * @throws TypeError or RangeError naming the bad option.
 */
export function resolveClusterOptions(options: RedisClusterOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedClusterOptions {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`RedisCluster options must be an object, got ${String(options)}`);
  }
  const masters = integerIn('masters', options.masters ?? CLUSTER_DEFAULTS.masters, 3, 16);
  const replicasPerMaster = integerIn('replicasPerMaster', options.replicasPerMaster ?? CLUSTER_DEFAULTS.replicasPerMaster, 0, 4);
  const nodeTimeoutMs = integerIn('nodeTimeoutMs', options.nodeTimeoutMs ?? CLUSTER_DEFAULTS.nodeTimeoutMs, 100, 600_000);
  const waitTimeoutMs = integerIn('waitTimeoutMs', options.waitTimeoutMs ?? CLUSTER_DEFAULTS.waitTimeoutMs, 1_000, 3_600_000);
  const redisCliPath = options.redisCliPath ?? nonEmpty(env['REDIS_CLI']) ?? CLUSTER_DEFAULTS.redisCliPath;
  if (typeof redisCliPath !== 'string' || redisCliPath === '') {
    throw new TypeError(`redisCliPath must be a non-empty string, got ${String(redisCliPath)}`);
  }
  return Object.freeze({
    ...resolveServerOptions(options, env),
    masters,
    replicasPerMaster,
    nodeTimeoutMs,
    waitTimeoutMs,
    redisCliPath,
  });
}
