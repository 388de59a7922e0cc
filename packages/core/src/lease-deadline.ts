/**
 * Clock drift allowed for a lease of `leaseMs`: 1 % plus 2 ms (the Redlock
 * paper's allowance for clock rate differences and timer granularity).
 */
export function driftMs(leaseMs: number): number {
  return leaseMs * 0.01 + 2;
}

/**
 * The monotonic time until which a lease taken or renewed by a command sent at
 * `sentAt` is certain: the server started counting no earlier than sentAt.
 */
export function leaseDeadline(sentAt: number, leaseMs: number): number {
  return sentAt + leaseMs - driftMs(leaseMs);
}

/** Monotonic milliseconds; never Date.now(), which jumps with the wall clock. */
export function monotonicNow(): number {
  return performance.now();
}
