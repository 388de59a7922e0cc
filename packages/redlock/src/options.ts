import { CLIENT_DEFAULTS, InvalidArgumentError, type CommonClientOptions, type RedisInput } from '@org/rlock-core';
import {
  COMMON_OPTION_NAMES,
  OptionReader,
  checkDurationMs,
  connectionEndpoint,
  describeValue,
  readCommonOptions,
  type ResolvedCommonOptions,
} from '@org/rlock-core/engine';

/** How a waiter retries after a split vote (jittered exponential backoff). */
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
export interface RedlockClientOptions extends CommonClientOptions {
  /**
   * The independent masters: each a `redis://`/`rediss://` URL or ioredis options
   * (rlock then owns the connection and closes it on `close()`), or an ioredis
   * `Redis` instance (used as is and left open). At least one, all distinct;
   * use an odd number (3 or 5): an even one tolerates no more failures than the
   * odd number below it. No Cluster, no connection with its own `keyPrefix`.
   */
  readonly masters: readonly RedisInput[];
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
   * How long a master that restarted does not vote, in ms: one whose run_id
   * changed while this client watched it, or whose uptime is below this while
   * another master's is above it (or ≥ 2 s longer). Without persistence a
   * restarted master forgot its grants, and another client could win a
   * majority beside a holder; this must cover the longest lease any client
   * uses. The cost: fewer voters for that long (with more than N − Q of them
   * sitting out, no lock can be taken). 0 turns it off (masters with
   * `appendfsync always`). An integer from 0 to 2^31 − 1.
   * @default watchdogTimeoutMs
   */
  readonly restartQuarantineMs?: number;
}

/** The defaults of {@link RedlockClientOptions}, in one frozen object. */
export const REDLOCK_DEFAULTS = Object.freeze({
  ...CLIENT_DEFAULTS,
  /** @see RedlockClientOptions.driftFactor */
  driftFactor: 0.01,
  /** @see RedlockClientOptions.perNodeTimeoutMs (capped by commandTimeoutMs) */
  perNodeTimeoutMs: 50,
  /** @see RedlockClientOptions.retry */
  retry: Object.freeze({
    /** Shortest wait before a retry, in ms. */
    minDelayMs: 5,
    /** Longest wait before a retry, in ms. */
    maxDelayMs: 200,
    /** Growth of the wait per failed round. */
    factor: 2,
  }),
});

export interface ResolvedRetryOptions {
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  readonly factor: number;
}

export interface ResolvedRedlockOptions extends ResolvedCommonOptions {
  readonly masters: readonly RedisInput[];
  /** Printable name of each master (URL without credentials, or host:port). */
  readonly masterNames: readonly string[];
  readonly driftFactor: number;
  readonly perNodeTimeoutMs: number;
  readonly retry: ResolvedRetryOptions;
  readonly restartQuarantineMs: number;
}

const RETRY_KNOWN = ['minDelayMs', 'maxDelayMs', 'factor'] as const;

/**
 * Fills in the defaults and checks every option: the client options every rlock
 * client takes (core's reader) and Redlock's own. All problems are reported
 * together in one InvalidArgumentError, before any connection is made.
 * @throws InvalidArgumentError listing every bad option.
 */
export function resolveRedlockOptions(options: unknown, what = 'createRedlock'): ResolvedRedlockOptions {
  const reader = new OptionReader(options, ['masters', ...COMMON_OPTION_NAMES, 'driftFactor', 'perNodeTimeoutMs', 'retry', 'restartQuarantineMs'], what);
  const masters = reader.check(() => checkMasters(reader.raw.masters), [] as { input: RedisInput; name: string }[]);
  const common = readCommonOptions(reader);
  const driftFactor = reader.read(
    'driftFactor',
    (value) => {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 0.5) {
        throw new InvalidArgumentError(`driftFactor must be a finite number from 0 to 0.5, got ${describeValue(value)}`);
      }
      return value;
    },
    REDLOCK_DEFAULTS.driftFactor,
  );
  const perNodeTimeoutMs = reader.read(
    'perNodeTimeoutMs',
    (value) => {
      const ms = checkDurationMs(value, 'perNodeTimeoutMs');
      if (ms > common.commandTimeoutMs) {
        throw new InvalidArgumentError(`perNodeTimeoutMs (${ms}) must not exceed commandTimeoutMs (${common.commandTimeoutMs})`);
      }
      return ms;
    },
    Math.min(REDLOCK_DEFAULTS.perNodeTimeoutMs, common.commandTimeoutMs),
  );
  const retry = reader.read('retry', checkRetry, REDLOCK_DEFAULTS.retry);
  const restartQuarantineMs = reader.read(
    'restartQuarantineMs',
    (value) => (value === 0 ? 0 : checkDurationMs(value, 'restartQuarantineMs')),
    common.watchdogTimeoutMs,
  );
  reader.done();
  const resolved = { masters: masters.map((m) => m.input), masterNames: masters.map((m) => m.name), driftFactor, perNodeTimeoutMs, retry, restartQuarantineMs };
  return { ...common, ...resolved };
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
      const { identity, name } = connectionEndpoint(input, `masters[${index}]`);
      const earlier = seen.get(identity) ?? (typeof input === 'object' && input !== null ? seenObjects.get(input) : undefined);
      if (earlier !== undefined) {
        throw new InvalidArgumentError(`masters[${index}] (${name}) is the same server as masters[${earlier}]: masters must be distinct`);
      }
      seen.set(identity, index);
      if (typeof input === 'object' && input !== null) seenObjects.set(input, index);
      result.push({ input: input as RedisInput, name });
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
    }
  });
  if (problems.length > 0) throw new InvalidArgumentError(problems.join('; '));
  return result;
}

function checkRetry(value: unknown): ResolvedRetryOptions {
  const reader = new OptionReader(value, RETRY_KNOWN, 'retry');
  const defaults = REDLOCK_DEFAULTS.retry;
  const minDelayMs = reader.read('minDelayMs', (ms) => checkDurationMs(ms, 'retry.minDelayMs'), defaults.minDelayMs);
  const maxDelayMs = reader.read('maxDelayMs', (ms) => checkDurationMs(ms, 'retry.maxDelayMs'), defaults.maxDelayMs);
  if (minDelayMs > maxDelayMs) reader.problem(`retry.minDelayMs (${minDelayMs}) must not exceed retry.maxDelayMs (${maxDelayMs})`);
  const factor = reader.read(
    'factor',
    (factor) => {
      if (typeof factor === 'number' && Number.isFinite(factor) && factor >= 1 && factor <= 10) return factor;
      throw new InvalidArgumentError(`retry.factor must be a finite number from 1 to 10, got ${describeValue(factor)}`);
    },
    defaults.factor,
  );
  reader.done();
  return Object.freeze({ minDelayMs, maxDelayMs, factor });
}
