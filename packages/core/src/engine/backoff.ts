/**
 * Wait in ms before retry `failures` (1 for the first): uniform in [b / 2, b], b = min(maxMs, minMs · factor^failures), at least
 * `minMs`; `random` in [0, 1). The jitter keeps clients retrying after one outage (or a split vote) from colliding again.
 */
export function backoffDelayMs(failures: number, minMs: number, maxMs: number, random: number, factor = 2): number {
  const ceiling = Math.min(maxMs, minMs * factor ** Math.max(1, failures));
  return Math.min(maxMs, Math.max(minMs, ceiling * (0.5 + random / 2)));
}
