import { InvalidArgumentError } from '@org/rlock-core';
import { describeValue } from '@org/rlock-core/internal';

/**
 * Options of a {@link Watchdog}. The renewal period is not an option: every hold
 * is renewed every `hold.leaseMs / 3`, as the design fixes.
 */
export interface WatchdogOptions {
  /**
   * Shortest wait, in ms, before a renewal whose call failed is tried again.
   * Retry n (n ≥ 1) of a hold waits a random time in [b / 2, b] with
   * b = min(maxRetryDelayMs, minRetryDelayMs · 2^n), and never less than this.
   * An integer from 1 to 2^31 − 1.
   * @default 100
   */
  minRetryDelayMs?: number;
  /**
   * Longest wait, in ms, before a renewal whose call failed is tried again; at
   * least `minRetryDelayMs`. Retries go on only until the hold's deadline, so
   * keep it well below the lease. An integer from 1 to 2^31 − 1.
   * @default 1_000
   */
  maxRetryDelayMs?: number;
  /**
   * How much earlier than due, in ms, a renewal may go out so that it shares a
   * tick (and so a batch) with renewals due just before it. For each hold the
   * window is capped at a tenth of its period (`leaseMs / 30`). Renewing early
   * is safe: it only moves the deadline forward sooner. 0 turns it off (renewals
   * due in the same ms still share a tick).
   * An integer from 0 to 2^31 − 1.
   * @default 100
   */
  coalesceWindowMs?: number;
}

/** {@link WatchdogOptions} with every field filled in. */
export type ResolvedWatchdogOptions = Readonly<Required<WatchdogOptions>>;

/** The defaults of every {@link WatchdogOptions} field. */
export const WATCHDOG_DEFAULTS: ResolvedWatchdogOptions = Object.freeze({
  minRetryDelayMs: 100,
  maxRetryDelayMs: 1_000,
  coalesceWindowMs: 100,
});

/** Largest delay Node timers accept (2^31 − 1 ms); a larger one fires after 1 ms. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

const KNOWN_KEYS = Object.keys(WATCHDOG_DEFAULTS) as readonly (keyof WatchdogOptions)[];

/**
 * Fills in defaults and checks every field once, so a bad option fails when the
 * client is created rather than inside a timer later.
 * @throws InvalidArgumentError on a value that is not an object, an unknown
 * option name (a typo would otherwise silently take the default), a duration that
 * is not an integer in range, or `minRetryDelayMs > maxRetryDelayMs`.
 */
export function resolveWatchdogOptions(options: WatchdogOptions | undefined): ResolvedWatchdogOptions {
  if (options === undefined) return WATCHDOG_DEFAULTS;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError(`watchdog options must be an object, got ${describeValue(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!(KNOWN_KEYS as readonly string[]).includes(key)) {
      throw new InvalidArgumentError(`watchdog options: unknown option "${key}" (known: ${KNOWN_KEYS.join(', ')})`);
    }
  }
  // Own properties only: an inherited one (a polluted Object.prototype) is no option.
  const own = (key: keyof WatchdogOptions): unknown => (Object.hasOwn(options, key) ? options[key] : undefined);
  const resolved = Object.freeze({
    minRetryDelayMs: checkMs(own('minRetryDelayMs'), 'minRetryDelayMs', 1),
    maxRetryDelayMs: checkMs(own('maxRetryDelayMs'), 'maxRetryDelayMs', 1),
    coalesceWindowMs: checkMs(own('coalesceWindowMs'), 'coalesceWindowMs', 0),
  });
  if (resolved.minRetryDelayMs > resolved.maxRetryDelayMs) {
    throw new InvalidArgumentError(
      `watchdog options: minRetryDelayMs (${resolved.minRetryDelayMs}) must not exceed maxRetryDelayMs (${resolved.maxRetryDelayMs})`,
    );
  }
  return resolved;
}

function checkMs(value: unknown, name: keyof WatchdogOptions, min: 0 | 1): number {
  if (value === undefined) return WATCHDOG_DEFAULTS[name];
  // Refused rather than coerced: a silently rounded duration is not the one asked for.
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > MAX_TIMER_DELAY_MS) {
    throw new InvalidArgumentError(
      `watchdog options: ${name} must be an integer number of ms from ${min} to ${MAX_TIMER_DELAY_MS}, got ${describeValue(value)}`,
    );
  }
  return value;
}
