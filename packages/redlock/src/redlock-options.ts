import {
  CLIENT_DEFAULTS,
  InvalidArgumentError,
  checkDurationMs,
  checkKeyPrefix,
  describeValue,
  type LeaseRenewerFactory,
  type RedisInput,
} from '@org/rlock-core';
import { describeMaster, masterIdentity } from './master-identity.js';

/** How a waiter retries after a split vote (p-retry's jittered exponential backoff). */
export interface RedlockRetryOptions {
  /**
   * Shortest wait before retrying after a round in which nobody won a majority
   * (a split vote), in ms. Retry n after such rounds waits a random time in
   * [d, 2d) with d = min(maxDelayMs, minDelayMs · factor^(n−1)).
   * An integer from 1 to 2^31 − 1.
   * @default 5
   */
  readonly minDelayMs?: number;
  /**
   * Longest wait before retrying after a split vote, in ms; at least `minDelayMs`.
   * @default 200
   */
  readonly maxDelayMs?: number;
  /**
   * Growth of the wait from one split vote to the next within one call: a finite
   * number from 1 to 10.
   * @default 2
   */
  readonly factor?: number;
}

/** Options of a Redlock client. Checked once, when it is created, all at once. */
export interface RedlockClientOptions {
  /**
   * The independent masters: each a `redis://`/`rediss://` URL or ioredis options
   * (rlock then owns the connection and closes it on `close()`), or an ioredis
   * `Redis` instance (used as is and left open). At least one, all distinct;
   * use an odd number (3 or 5): an even one tolerates no more failures than the
   * odd number below it. No Cluster, no connection with its own `keyPrefix`.
   */
  readonly masters: readonly RedisInput[];
  /**
   * Prefix of every key and channel, the same on every master: `<keyPrefix>:{<name>}`. No braces.
   * @default 'rlock'
   */
  readonly keyPrefix?: string;
  /**
   * Lease of a hold taken without `leaseMs`, in ms; the watchdog renews it on
   * the masters every third of it. Also caps a waiter's sleep at a third of it.
   * @default 30_000
   */
  readonly watchdogTimeoutMs?: number;
  /**
   * rlock's own limit, in ms, on every call to one master other than the
   * acquire of a round (release, renewal, forceUnlock, subscribe). Must be below
   * watchdogTimeoutMs / 3.
   * @default min(5_000, floor(watchdogTimeoutMs / 3))
   */
  readonly commandTimeoutMs?: number;
  /**
   * Clock drift allowed per ms of lease: drift = leaseMs × driftFactor + 2 ms.
   * A hold is acquired only if lease − elapsed − drift > 0, and is certain until
   * start + lease − drift. A finite number from 0 to 0.5.
   * @default 0.01
   */
  readonly driftFactor?: number;
  /**
   * How long one master may take to answer an acquire (and the reads of
   * `isLocked`, `remainTimeToLive`, …), in ms. A master that does not answer in
   * time counts as failed for that round, so a frozen master costs each round at
   * most this long. At most `commandTimeoutMs`.
   * @default min(50, commandTimeoutMs)
   */
  readonly perNodeTimeoutMs?: number;
  /** Jittered backoff after split votes. @default { minDelayMs: 5, maxDelayMs: 200, factor: 2 } */
  readonly retry?: RedlockRetryOptions;
  /**
   * Builds the lease renewer. `createRedlock` wires `@org/rlock-watchdog`;
   * without one the client takes fixed leases only.
   * @default undefined
   */
  readonly renewer?: LeaseRenewerFactory;
}

/** The defaults of {@link RedlockClientOptions}, in one frozen object. */
export const REDLOCK_DEFAULTS = Object.freeze({
  keyPrefix: CLIENT_DEFAULTS.keyPrefix,
  watchdogTimeoutMs: CLIENT_DEFAULTS.watchdogTimeoutMs,
  maxCommandTimeoutMs: CLIENT_DEFAULTS.maxCommandTimeoutMs,
  driftFactor: 0.01,
  perNodeTimeoutMs: 50,
  retry: Object.freeze({ minDelayMs: 5, maxDelayMs: 200, factor: 2 }),
});

export interface ResolvedRetryOptions {
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  readonly factor: number;
}

export interface ResolvedRedlockOptions {
  readonly masters: readonly RedisInput[];
  /** Printable name of each master (URL without credentials, or host:port). */
  readonly masterNames: readonly string[];
  readonly keyPrefix: string;
  readonly watchdogTimeoutMs: number;
  readonly commandTimeoutMs: number;
  readonly driftFactor: number;
  readonly perNodeTimeoutMs: number;
  readonly retry: ResolvedRetryOptions;
  readonly renewer: LeaseRenewerFactory | undefined;
}

const KNOWN = [
  'masters',
  'keyPrefix',
  'watchdogTimeoutMs',
  'commandTimeoutMs',
  'driftFactor',
  'perNodeTimeoutMs',
  'retry',
  'renewer',
] as const;
const RETRY_KNOWN = ['minDelayMs', 'maxDelayMs', 'factor'] as const;

/**
 * Fills in the defaults and checks every option. All problems are collected and
 * reported together in one InvalidArgumentError, before any connection is made.
 * @throws InvalidArgumentError listing every bad option.
 */
export function resolveRedlockOptions(options: unknown, what = 'createRedlock'): ResolvedRedlockOptions {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError(`${what}: options are required (at least { masters }), got ${describeValue(options)}`);
  }
  const raw = options as Record<string, unknown>;
  const problems: string[] = [];
  const check = <T>(fn: () => T, fallback: T): T => {
    try {
      return fn();
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
      return fallback;
    }
  };

  for (const key of Object.keys(raw)) {
    if (!(KNOWN as readonly string[]).includes(key)) problems.push(`unknown option "${key}" (known: ${KNOWN.join(', ')})`);
  }

  const masters = check(() => checkMasters(raw.masters), [] as { input: RedisInput; name: string }[]);
  const keyPrefix = raw.keyPrefix === undefined ? REDLOCK_DEFAULTS.keyPrefix : check(() => checkKeyPrefix(raw.keyPrefix), 'rlock');
  const watchdogTimeoutMs =
    raw.watchdogTimeoutMs === undefined
      ? REDLOCK_DEFAULTS.watchdogTimeoutMs
      : check(() => {
          const value = checkDurationMs(raw.watchdogTimeoutMs, 'watchdogTimeoutMs');
          if (value < 3) throw new InvalidArgumentError('watchdogTimeoutMs must be at least 3 ms');
          return value;
        }, REDLOCK_DEFAULTS.watchdogTimeoutMs);
  const third = watchdogTimeoutMs / 3;
  const commandTimeoutMs =
    raw.commandTimeoutMs === undefined
      ? Math.max(1, Math.min(REDLOCK_DEFAULTS.maxCommandTimeoutMs, Math.floor(third)))
      : check(() => {
          const value = checkDurationMs(raw.commandTimeoutMs, 'commandTimeoutMs');
          if (value >= third) {
            throw new InvalidArgumentError(
              `commandTimeoutMs (${value}) must be below watchdogTimeoutMs / 3 (${third}), so a timed-out renewal can be retried within the lease`,
            );
          }
          return value;
        }, 1);
  const driftFactor =
    raw.driftFactor === undefined
      ? REDLOCK_DEFAULTS.driftFactor
      : check(() => {
          const value = raw.driftFactor;
          if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 0.5) {
            throw new InvalidArgumentError(`driftFactor must be a finite number from 0 to 0.5, got ${describeValue(value)}`);
          }
          return value;
        }, REDLOCK_DEFAULTS.driftFactor);
  const perNodeTimeoutMs =
    raw.perNodeTimeoutMs === undefined
      ? Math.min(REDLOCK_DEFAULTS.perNodeTimeoutMs, commandTimeoutMs)
      : check(() => {
          const value = checkDurationMs(raw.perNodeTimeoutMs, 'perNodeTimeoutMs');
          if (value > commandTimeoutMs) {
            throw new InvalidArgumentError(`perNodeTimeoutMs (${value}) must not exceed commandTimeoutMs (${commandTimeoutMs})`);
          }
          return value;
        }, 1);
  const retry = check(() => checkRetry(raw.retry), REDLOCK_DEFAULTS.retry);
  if (raw.renewer !== undefined && typeof raw.renewer !== 'function') {
    problems.push(`renewer must be a function, got ${describeValue(raw.renewer)}`);
  }

  if (problems.length > 0) {
    throw new InvalidArgumentError(`${what}: ${problems.length === 1 ? 'bad option' : `${problems.length} bad options`}: ${problems.join('; ')}`);
  }
  return {
    masters: masters.map((m) => m.input),
    masterNames: masters.map((m) => m.name),
    keyPrefix,
    watchdogTimeoutMs,
    commandTimeoutMs,
    driftFactor,
    perNodeTimeoutMs,
    retry,
    renewer: raw.renewer as LeaseRenewerFactory | undefined,
  };
}

function checkMasters(value: unknown): { input: RedisInput; name: string }[] {
  if (!Array.isArray(value)) {
    throw new InvalidArgumentError(`masters must be an array of URLs, ioredis options or ioredis instances, got ${describeValue(value)}`);
  }
  if (value.length === 0) throw new InvalidArgumentError('masters must list at least one master (typically 3 or 5)');
  const problems: string[] = [];
  const seen = new Map<string, number>();
  const seenObjects = new Map<object, number>();
  const result: { input: RedisInput; name: string }[] = [];
  value.forEach((input: unknown, index) => {
    try {
      const identity = masterIdentity(input);
      const name = describeMaster(input);
      const earlier = seen.get(identity) ?? (typeof input === 'object' && input !== null ? seenObjects.get(input) : undefined);
      if (earlier !== undefined) {
        throw new InvalidArgumentError(`masters[${index}] (${name}) is the same server as masters[${earlier}]: masters must be distinct`);
      }
      seen.set(identity, index);
      if (typeof input === 'object' && input !== null) seenObjects.set(input, index);
      result.push({ input: input as RedisInput, name });
    } catch (error) {
      problems.push(error instanceof Error ? error.message.replace('masters[?]', `masters[${index}]`) : String(error));
    }
  });
  if (problems.length > 0) throw new InvalidArgumentError(problems.join('; '));
  return result;
}

function checkRetry(value: unknown): ResolvedRetryOptions {
  if (value === undefined) return REDLOCK_DEFAULTS.retry;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidArgumentError(`retry must be an object, got ${describeValue(value)}`);
  }
  const raw = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(raw)) {
    if (!(RETRY_KNOWN as readonly string[]).includes(key)) {
      problems.push(`retry: unknown option "${key}" (known: ${RETRY_KNOWN.join(', ')})`);
    }
  }
  const duration = (key: 'minDelayMs' | 'maxDelayMs'): number => {
    if (raw[key] === undefined) return REDLOCK_DEFAULTS.retry[key];
    try {
      return checkDurationMs(raw[key], `retry.${key}`);
    } catch (error) {
      problems.push((error as Error).message);
      return REDLOCK_DEFAULTS.retry[key];
    }
  };
  const minDelayMs = duration('minDelayMs');
  const maxDelayMs = duration('maxDelayMs');
  if (minDelayMs > maxDelayMs) problems.push(`retry.minDelayMs (${minDelayMs}) must not exceed retry.maxDelayMs (${maxDelayMs})`);
  let factor: number = REDLOCK_DEFAULTS.retry.factor;
  if (raw.factor !== undefined) {
    if (typeof raw.factor !== 'number' || !Number.isFinite(raw.factor) || raw.factor < 1 || raw.factor > 10) {
      problems.push(`retry.factor must be a finite number from 1 to 10, got ${describeValue(raw.factor)}`);
    } else {
      factor = raw.factor;
    }
  }
  if (problems.length > 0) throw new InvalidArgumentError(problems.join('; '));
  return Object.freeze({ minDelayMs, maxDelayMs, factor });
}
