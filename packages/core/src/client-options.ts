import { checkDurationMs, checkFunction, checkKnownKeys, checkOptionsObject } from './argument-checks.js';
import { InvalidArgumentError } from './errors.js';
import type { LeaseRenewerFactory } from './lease-renewal.js';
import { checkKeyPrefix } from './lock-keys.js';
import type { RedisInput } from './redis-connection.js';

/** Options of a client. Checked once, when the client is created. */
export interface RLockClientOptions {
  /**
   * The Redis to use: a `redis://` URL or ioredis options (rlock then owns the
   * connection, pipelines automatically and closes it on `close()`), or an
   * ioredis instance (used as is and left open). Instances and options with
   * their own `keyPrefix` are refused. A Cluster is not supported yet.
   */
  readonly redis: RedisInput;
  /**
   * Prefix of every key and channel: `<keyPrefix>:{<name>}`. No braces.
   * @default 'rlock'
   */
  readonly keyPrefix?: string;
  /**
   * Lease of a hold taken without `leaseMs`, in ms; the watchdog renews it every
   * third of it. It also caps a waiter's sleep at a third of it.
   * @default 30_000
   */
  readonly watchdogTimeoutMs?: number;
  /**
   * rlock's own limit on every Redis call, in ms, whatever ioredis's retry
   * settings: past it the call rejects with RedisUnavailableError. Must be below
   * watchdogTimeoutMs / 3, so a renewal that times out still leaves time to retry.
   * @default min(5_000, floor(watchdogTimeoutMs / 3))
   */
  readonly commandTimeoutMs?: number;
  /**
   * Builds the lease renewer (the watchdog). `@org/rlock`'s `createClient` wires
   * `@org/rlock-watchdog`; without one the client takes fixed leases only.
   * @default undefined
   */
  readonly renewer?: LeaseRenewerFactory;
}

export const CLIENT_DEFAULTS = Object.freeze({
  keyPrefix: 'rlock',
  watchdogTimeoutMs: 30_000,
  maxCommandTimeoutMs: 5_000,
});

export interface ResolvedClientOptions {
  readonly redis: unknown;
  readonly keyPrefix: string;
  readonly watchdogTimeoutMs: number;
  readonly commandTimeoutMs: number;
  readonly renewer: LeaseRenewerFactory | undefined;
}

const KNOWN = ['redis', 'keyPrefix', 'watchdogTimeoutMs', 'commandTimeoutMs', 'renewer'] as const;

/** @throws InvalidArgumentError naming the first bad option. */
export function resolveClientOptions(options: unknown, extraKnown: readonly string[] = []): ResolvedClientOptions {
  if (options === undefined) throw new InvalidArgumentError('client options are required (at least { redis })');
  const raw = checkOptionsObject(options, 'client options');
  checkKnownKeys(raw, [...KNOWN, ...extraKnown], 'client options');
  if (raw.redis === undefined) throw new InvalidArgumentError('client options: redis is required');
  const keyPrefix = raw.keyPrefix === undefined ? CLIENT_DEFAULTS.keyPrefix : checkKeyPrefix(raw.keyPrefix);
  const watchdogTimeoutMs =
    raw.watchdogTimeoutMs === undefined
      ? CLIENT_DEFAULTS.watchdogTimeoutMs
      : checkDurationMs(raw.watchdogTimeoutMs, 'watchdogTimeoutMs');
  if (watchdogTimeoutMs < 3) throw new InvalidArgumentError('watchdogTimeoutMs must be at least 3 ms');
  const third = watchdogTimeoutMs / 3;
  let commandTimeoutMs: number;
  if (raw.commandTimeoutMs === undefined) {
    commandTimeoutMs = Math.max(1, Math.min(CLIENT_DEFAULTS.maxCommandTimeoutMs, Math.floor(third)));
  } else {
    commandTimeoutMs = checkDurationMs(raw.commandTimeoutMs, 'commandTimeoutMs');
    if (commandTimeoutMs >= third) {
      throw new InvalidArgumentError(
        `commandTimeoutMs (${commandTimeoutMs}) must be below watchdogTimeoutMs / 3 (${third}), so a timed-out renewal can be retried within the lease`,
      );
    }
  }
  if (raw.renewer !== undefined) checkFunction(raw.renewer, 'renewer');
  return {
    redis: raw.redis,
    keyPrefix,
    watchdogTimeoutMs,
    commandTimeoutMs,
    renewer: raw.renewer as LeaseRenewerFactory | undefined,
  };
}
