/**
 * Wait before retry `failures` (1 for the first), in ms: uniform in [b / 2, b]
 * with b = min(maxMs, minMs · factor^failures), at least `minMs`. The jitter
 * keeps clients retrying after one outage (or a split vote) from colliding again.
 *
 * @param random a number in [0, 1), `Math.random()` in production.
 * @returns a wait in [minMs, maxMs].
 */
export function backoffDelayMs(failures: number, minMs: number, maxMs: number, random: number, factor = 2): number {
  const ceiling = Math.min(maxMs, minMs * factor ** Math.max(1, failures));
  return Math.min(maxMs, Math.max(minMs, ceiling * (0.5 + random / 2)));
}
