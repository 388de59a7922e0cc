import type { WaitOptions } from '../wait-options.js';

/**
 * A count-down latch (`java.util.concurrent.CountDownLatch`, Redisson's
 * RCountDownLatch) shared by every client of one deployment: `await()` waits
 * until the count reaches zero. Reaching zero deletes the key and publishes
 * once; awaiters in every process wake by pub/sub (a lost message costs at
 * most the capped sleep, `watchdogTimeoutMs / 3`). A latch at zero can be set
 * again with `trySetCount`.
 *
 * @example
 * const batch = client.getCountDownLatch('batch:3');
 * await batch.trySetCount(3);                   // the coordinator
 * await batch.countDown();                      // each of 3 workers, when done
 * const done = await batch.await({ waitMs: 60_000 }); // anyone: true at zero
 */
export interface RCountDownLatch {
  /** The latch's name. */
  readonly name: string;
  /**
   * Sets the count (1 to 2^31 − 1), only when it is zero (or was never set).
   * Resolves true when it set it, false when the latch was counting already.
   */
  trySetCount(count: number): Promise<boolean>;
  /** Counts down by one (nothing when already zero); the call that reaches zero wakes every awaiter. Resolves the count left. */
  countDown(): Promise<number>;
  /** The remaining count (0 when zero or never set). */
  getCount(): Promise<number>;
  /**
   * Waits until the count is zero: true then (at once when it is zero
   * already), false when `waitMs` ran out first; rejects with `signal.reason`
   * when `signal` aborts. Without `waitMs`, waits without limit.
   */
  await(options?: WaitOptions): Promise<boolean>;
}
