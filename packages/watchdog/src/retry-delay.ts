/**
 * Wait before retry `failures` (1 for the first retry) of a failed renewal, in ms:
 * exponential backoff with "equal jitter". The ceiling b = min(maxMs, minMs · 2^failures)
 * grows with every failure; the wait is uniform in [b / 2, b], never below `minMs`.
 * The jitter spreads the retries of many clients after a shared outage, so a Redis
 * that comes back is not hit by all of them in the same millisecond; the lower half
 * of the range is cut off so a retry never comes right on the heels of a failure.
 *
 * @param random a number in [0, 1), `Math.random()` in production.
 * @returns a wait in [minMs, maxMs].
 */
export function retryDelayMs(failures: number, minMs: number, maxMs: number, random: number): number {
  const ceiling = Math.min(maxMs, minMs * 2 ** Math.max(1, failures));
  return Math.min(maxMs, Math.max(minMs, ceiling * (0.5 + random / 2)));
}
