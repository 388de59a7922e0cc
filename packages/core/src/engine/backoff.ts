/**
 * Wait before retry `failures` (1 for the first retry) of a failed call, in ms:
 * exponential backoff with "equal jitter". The ceiling b = min(maxMs, minMs ·
 * factor^failures) grows with every failure; the wait is uniform in [b / 2, b],
 * never below `minMs`. The jitter spreads the retries of many clients after a
 * shared outage (or a split Redlock vote), so they do not collide again in the
 * same millisecond; the lower half of the range is cut off so a retry never
 * comes right on the heels of a failure. Used by the watchdog's renewals,
 * releases finished in the background and Redlock's rounds.
 *
 * @param random a number in [0, 1), `Math.random()` in production.
 * @returns a wait in [minMs, maxMs].
 */
export function backoffDelayMs(failures: number, minMs: number, maxMs: number, random: number, factor = 2): number {
  const ceiling = Math.min(maxMs, minMs * factor ** Math.max(1, failures));
  return Math.min(maxMs, Math.max(minMs, ceiling * (0.5 + random / 2)));
}
