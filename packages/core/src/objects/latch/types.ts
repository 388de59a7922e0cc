import type { WaitOptions } from '../wait-options.js';

/**
 * A count-down latch (Redisson's RCountDownLatch). Reaching zero deletes the key and publishes once (a lost message costs
 * at most a capped sleep, `watchdogTimeoutMs / 3`); a latch at zero can be set again.
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
  /** Sets the count (1 to 2^31 − 1), only when it is zero; true when it set it. */
  trySetCount(count: number): Promise<boolean>;
  /** Counts down by one (nothing when already zero); the call that reaches zero wakes every awaiter. Resolves the count left. */
  countDown(): Promise<number>;
  /** The remaining count (0 when zero or never set). */
  getCount(): Promise<number>;
  /** Waits until the count is zero: true then, false when `waitMs` ran out; rejects when `signal` aborts. */
  await(options?: WaitOptions): Promise<boolean>;
}
