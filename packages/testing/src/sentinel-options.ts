import { integerIn, resolveServerOptions, type ResolvedServerOptions, type ServerOptions } from './fleet-options.js';

/** Options of {@link RedisSentinelGroup.start}. `appendonly`, `appendfsync` and `extraArgs` apply to the data nodes only. */
export interface RedisSentinelGroupOptions extends ServerOptions {
  /**
   * Replicas of the master (`replicaof`). With 0 there is nothing to fail
   * over to. An integer from 0 to 8.
   * @default 1
   */
  replicas?: number;
  /**
   * Number of Sentinels. An integer from 1 to 9; use at least 3 for a real
   * majority.
   * @default 3
   */
  sentinels?: number;
  /**
   * Name the Sentinels monitor the master under (`sentinel monitor <name>`,
   * ioredis' `name`): letters, digits, `.`, `_` and `-`.
   * @default 'mymaster'
   */
  masterName?: string;
  /**
   * Sentinels that must agree the master is down before a failover starts.
   * An integer from 1 to `sentinels`.
   * @default a majority: Math.floor(sentinels / 2) + 1
   */
  quorum?: number;
  /**
   * `sentinel down-after-milliseconds`: how long the master may go
   * unanswered before a Sentinel considers it down. An integer ≥ 100.
   * @default 1000
   */
  downAfterMs?: number;
  /**
   * `sentinel failover-timeout`: bounds each failover step, and a failover
   * of the same master is retried only after twice this. An integer ≥ 1000.
   * @default 3000
   */
  failoverTimeoutMs?: number;
  /**
   * Bound on each wait of the group: `start()` until every Sentinel knows the
   * replicas and the other Sentinels, `waitForFailover()` and `restart()`
   * (both also take their own `timeoutMs`). An integer ≥ 1000.
   * @default 30000
   */
  waitTimeoutMs?: number;
}

/** Options after defaults were applied. */
export interface ResolvedSentinelGroupOptions extends ResolvedServerOptions {
  readonly replicas: number;
  readonly sentinels: number;
  readonly masterName: string;
  readonly quorum: number;
  readonly downAfterMs: number;
  readonly failoverTimeoutMs: number;
  readonly waitTimeoutMs: number;
}

/** Every default of {@link RedisSentinelGroupOptions} beyond the shared server options (FLEET_DEFAULTS); `quorum` defaults to a majority. */
export const SENTINEL_GROUP_DEFAULTS = Object.freeze({
  replicas: 1,
  sentinels: 3,
  masterName: 'mymaster',
  downAfterMs: 1_000,
  failoverTimeoutMs: 3_000,
  waitTimeoutMs: 30_000,
});

/**
 * Applies defaults and `REDIS_SERVER` and checks every option once.
 * @throws TypeError or RangeError naming the bad option.
 */
export function resolveSentinelGroupOptions(options: RedisSentinelGroupOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedSentinelGroupOptions {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`RedisSentinelGroup options must be an object, got ${String(options)}`);
  }
  const replicas = integerIn('replicas', options.replicas ?? SENTINEL_GROUP_DEFAULTS.replicas, 0, 8);
  const sentinels = integerIn('sentinels', options.sentinels ?? SENTINEL_GROUP_DEFAULTS.sentinels, 1, 9);
  const masterName = options.masterName ?? SENTINEL_GROUP_DEFAULTS.masterName;
  // It goes into a config file line unquoted: no spaces, quotes or newlines.
  if (typeof masterName !== 'string' || !/^[A-Za-z0-9._-]+$/.test(masterName)) {
    throw new TypeError(`masterName must be letters, digits, '.', '_' or '-', got ${JSON.stringify(masterName)}`);
  }
  const quorum = integerIn('quorum', options.quorum ?? Math.floor(sentinels / 2) + 1, 1, sentinels);
  const downAfterMs = integerIn('downAfterMs', options.downAfterMs ?? SENTINEL_GROUP_DEFAULTS.downAfterMs, 100, 600_000);
  const failoverTimeoutMs = integerIn('failoverTimeoutMs', options.failoverTimeoutMs ?? SENTINEL_GROUP_DEFAULTS.failoverTimeoutMs, 1_000, 3_600_000);
  const waitTimeoutMs = integerIn('waitTimeoutMs', options.waitTimeoutMs ?? SENTINEL_GROUP_DEFAULTS.waitTimeoutMs, 1_000, 3_600_000);
  return Object.freeze({
    ...resolveServerOptions(options, env),
    replicas,
    sentinels,
    masterName,
    quorum,
    downAfterMs,
    failoverTimeoutMs,
    waitTimeoutMs,
  });
}
