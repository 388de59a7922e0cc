import { onAbort } from '../tasks/abort-fan-out.js';

/** Clock drift allowed per ms of lease when nothing else is configured (1 %). */
export const DEFAULT_DRIFT_FACTOR = 0.01;

/** Clock drift allowed for a lease: `leaseMs × driftFactor + 2 ms` (the Redlock paper's clock-rate allowance plus timer granularity). */
export function driftMs(leaseMs: number, driftFactor = DEFAULT_DRIFT_FACTOR): number {
  return leaseMs * driftFactor + 2;
}

/** The monotonic time until which a lease sent at `sentAt` is certain: the server started counting no earlier. */
export function leaseDeadline(sentAt: number, leaseMs: number, driftFactor = DEFAULT_DRIFT_FACTOR): number {
  return sentAt + leaseMs - driftMs(leaseMs, driftFactor);
}

/** Monotonic milliseconds; never Date.now(), which jumps with the wall clock. */
export function monotonicNow(): number {
  return performance.now();
}

/**
 * Sleeps `ms` (at least 1), or rejects with `signal`'s own reason when it aborts first (node:timers/promises wraps it in an AbortError);
 * `holdsProcess` false: the timer does not keep the process alive. Any number of sleeps on one signal share one abort listener
 * (timers/promises' own would add one per sleep, and Node warns of a leak past 10).
 */
export function sleepFor(ms: number, signal: AbortSignal | undefined, holdsProcess = true): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(
      () => {
        stopListening?.();
        resolve();
      },
      Math.max(1, Math.ceil(ms)),
    );
    if (!holdsProcess) timer.unref();
    const stopListening = signal
      ? onAbort(signal, () => {
          clearTimeout(timer);
          reject(signal.reason);
        })
      : undefined;
  });
}
