import { CLIENT_DEFAULTS, InvalidArgumentError, type CommonClientOptions, type RedisInput } from '@org/rlock-core';
import {
  COMMON_OPTION_NAMES,
  OptionReader,
  checkBoolean,
  checkDurationMs,
  describeValue,
  distinctEndpoints,
  printRedacted,
  readCommonOptions,
  type ResolvedCommonOptions,
} from '@org/rlock-core/internal';

/** How a waiter backs off after rounds nobody won, or without a possible majority (jittered, exponential). */
export interface RedlockRetryOptions {
  /** Shortest wait, in ms: retry n waits a random time in [d/2, d], d = min(maxDelayMs, minDelayMs · factor^n). @default 5 */
  readonly minDelayMs?: number;
  /** Longest wait, in ms (≥ minDelayMs); also the longest sleep while announcements may not come. @default 200 */
  readonly maxDelayMs?: number;
  /** Growth of the wait from one such round to the next: 1 to 10. @default 2 */
  readonly factor?: number;
}

/** Options of a Redlock client. Checked once, when it is created, all at once. */
export interface RedlockClientOptions extends CommonClientOptions {
  /**
   * The independent masters (use 3 or 5, all distinct): URLs, `host:port` or ioredis options
   * (rlock owns and closes the connection), or `Redis` instances (left open).
   * No Cluster, no `keyPrefix` of their own.
   */
  readonly masters: readonly RedisInput[];
  /** Clock drift allowed per ms of lease: drift = leaseMs × driftFactor + 2 ms; from 0 to 0.5. @default 0.01 */
  readonly driftFactor?: number;
  /**
   * How long one master may take to answer an acquire or a read, in ms: past
   * it, it counts as failed for that round. At most `commandTimeoutMs`.
   * @default min(50, commandTimeoutMs)
   */
  readonly perNodeTimeoutMs?: number;
  /** Backoff after rounds nobody won. @default { minDelayMs: 5, maxDelayMs: 200, factor: 2 } */
  readonly retry?: RedlockRetryOptions;
  /**
   * How long a restarted master does not vote, in ms from its start (its
   * run_id changed, or it started ≥ 2 s after another). Without persistence it
   * forgot its grants, so it sits out the longest lease; meanwhile there are
   * fewer voters. 0 turns it off (masters with `appendfsync always`).
   * @default watchdogTimeoutMs
   */
  readonly restartQuarantineMs?: number;
  /**
   * Keep the process alive only while a hold, wait or call is in progress, so a program without `close()` ends; masters
   * given as instances stay referenced.
   * @default true
   */
  readonly unrefWhenIdle?: boolean;
}

/** The defaults of {@link RedlockClientOptions}, in one frozen object. */
export const REDLOCK_DEFAULTS = Object.freeze({
  ...CLIENT_DEFAULTS,
  /** @see RedlockClientOptions.driftFactor */
  driftFactor: 0.01,
  /** @see RedlockClientOptions.perNodeTimeoutMs (capped by commandTimeoutMs) */
  perNodeTimeoutMs: 50,
  /** @see RedlockClientOptions.retry */
  retry: Object.freeze<Required<RedlockRetryOptions>>({ minDelayMs: 5, maxDelayMs: 200, factor: 2 }),
});

export type ResolvedRetryOptions = Readonly<Required<RedlockRetryOptions>>;

export interface ResolvedRedlockOptions extends ResolvedCommonOptions {
  readonly masters: readonly RedisInput[];
  /** Printable name of each master (URL without credentials, or host:port). */
  readonly masterNames: readonly string[];
  readonly driftFactor: number;
  readonly perNodeTimeoutMs: number;
  readonly retry: ResolvedRetryOptions;
  readonly restartQuarantineMs: number;
  readonly unrefWhenIdle: boolean;
}

const RETRY_KNOWN = ['minDelayMs', 'maxDelayMs', 'factor'] as const;

/**
 * Fills in the defaults and checks every option before connecting.
 * @throws InvalidArgumentError listing every bad option.
 */
export function resolveRedlockOptions(options: unknown, what = 'createRedlock'): ResolvedRedlockOptions {
  const reader = new OptionReader(
    options,
    ['masters', ...COMMON_OPTION_NAMES, 'driftFactor', 'perNodeTimeoutMs', 'retry', 'restartQuarantineMs', 'unrefWhenIdle'],
    what,
  );
  const masters = reader.check(
    () => distinctEndpoints(reader.raw.masters, 'masters', 'master (typically 3 or 5)'),
    [] as { input: RedisInput; name: string }[],
  );
  const common = readCommonOptions(reader);
  const driftFactor = reader.read('driftFactor', (value) => checkNumber(value, 'driftFactor', 0, 0.5), REDLOCK_DEFAULTS.driftFactor);
  const perNodeTimeoutMs = reader.read(
    'perNodeTimeoutMs',
    (value) => {
      const ms = checkDurationMs(value, 'perNodeTimeoutMs');
      if (ms <= common.commandTimeoutMs) return ms;
      throw new InvalidArgumentError(`perNodeTimeoutMs (${ms}) must not exceed commandTimeoutMs (${common.commandTimeoutMs})`);
    },
    Math.min(REDLOCK_DEFAULTS.perNodeTimeoutMs, common.commandTimeoutMs),
  );
  const retry = reader.read('retry', checkRetry, REDLOCK_DEFAULTS.retry);
  const quarantine = (value: unknown): number => (value === 0 ? 0 : checkDurationMs(value, 'restartQuarantineMs'));
  const restartQuarantineMs = reader.read('restartQuarantineMs', quarantine, common.watchdogTimeoutMs);
  const unrefWhenIdle = reader.read('unrefWhenIdle', (value) => checkBoolean(value, 'unrefWhenIdle'), REDLOCK_DEFAULTS.unrefWhenIdle);
  reader.done();
  const resolved = {
    masters: masters.map((m) => m.input),
    masterNames: masters.map((m) => m.name),
    driftFactor,
    perNodeTimeoutMs,
    retry,
    restartQuarantineMs,
    unrefWhenIdle,
  };
  return printRedacted({ ...common, ...resolved });
}

function checkRetry(value: unknown): ResolvedRetryOptions {
  const reader = new OptionReader(value, RETRY_KNOWN, 'retry');
  const defaults = REDLOCK_DEFAULTS.retry;
  const minDelayMs = reader.read('minDelayMs', (ms) => checkDurationMs(ms, 'retry.minDelayMs'), defaults.minDelayMs);
  const maxDelayMs = reader.read('maxDelayMs', (ms) => checkDurationMs(ms, 'retry.maxDelayMs'), defaults.maxDelayMs);
  if (minDelayMs > maxDelayMs) reader.problem(`retry.minDelayMs (${minDelayMs}) must not exceed retry.maxDelayMs (${maxDelayMs})`);
  const factor = reader.read('factor', (value) => checkNumber(value, 'retry.factor', 1, 10), defaults.factor);
  reader.done();
  return Object.freeze({ minDelayMs, maxDelayMs, factor });
}

function checkNumber(value: unknown, what: string, min: number, max: number): number {
  if (typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max) return value;
  throw new InvalidArgumentError(`${what} must be a finite number from ${min} to ${max}, got ${describeValue(value)}`);
}
