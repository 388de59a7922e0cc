/**
 * Wait before retry `failures` (1 for the first) of a failed call, in ms:
 * uniform in [b / 2, b] with b = min(maxMs, minMs · factor^failures), never
 * below `minMs`. The jitter keeps many clients retrying after one outage (or a
 * split Redlock vote) from colliding again; the floor of b / 2 keeps a retry
 * off the heels of the failure.
 *
 * @param random a number in [0, 1), `Math.random()` in production.
 * @returns a wait in [minMs, maxMs].
 */
export function backoffDelayMs(failures: number, minMs: number, maxMs: number, random: number, factor = 2): number {
  const ceiling = Math.min(maxMs, minMs * factor ** Math.max(1, failures));
  return Math.min(maxMs, Math.max(minMs, ceiling * (0.5 + random / 2)));
}
