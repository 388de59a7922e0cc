import type { WaitOptions } from '../wait-options.js';

/**
 * A counting semaphore (Redisson's RSemaphore) whose permits are **not owned**: anyone may release them, and a crashed holder's are gone
 * until `addPermits` (`getPermitExpirableSemaphore` leases them). Counts are integers from 1 to 2^31 − 1 (`addPermits` also negative).
 *
 * @example
 * const quota = client.getSemaphore('api:quota');
 * await quota.trySetPermits(8);           // once, by whoever sets it up
 * await quota.acquire();                  // waits for a permit
 * try { await callTheApi(); } finally { await quota.release(); }
 */
export interface RSemaphore {
  /** The semaphore's name. */
  readonly name: string;
  /** Sets the number of permits, only when the semaphore is not set yet; true when it set them. */
  trySetPermits(permits: number): Promise<boolean>;
  /** Adds `delta` permits (negative: removes them; the count may go below zero). Resolves the available count after. */
  addPermits(delta: number): Promise<number>;
  /**
   * Takes one permit, waiting until it is available or `signal` aborts (rejects with its reason); inside or outside tasks.
   * @throws InvalidArgumentError for a bad option
   * @throws LockAcquireTimeoutError when `waitMs` runs out
   */
  acquire(options?: WaitOptions): Promise<void>;
  /** Takes `permits` permits: as `acquire(options)`, with a count (1 to 2^31−1). */
  acquire(permits: number, options?: WaitOptions): Promise<void>;
  /** Like `acquire`, but resolves false when the permits did not come within `waitMs` (default 0: one try). */
  tryAcquire(options?: WaitOptions): Promise<boolean>;
  /** Tries to take `permits` permits: as `tryAcquire(options)`, with a count (1 to 2^31−1). */
  tryAcquire(permits: number, options?: WaitOptions): Promise<boolean>;
  /**
   * Gives `permits` (default 1) back; anyone may release. This client's waiting tasks get them without a Redis call,
   * except after 255 hand-offs (or 50 ms of them) or another client's long wait, so other clients get a turn.
   */
  release(permits?: number): Promise<void>;
  /** The available count (0 when not set; negative after `addPermits` removed more than there was). */
  availablePermits(): Promise<number>;
  /** Takes every available permit at once; resolves how many (0 when none, or the count was negative: it becomes 0). */
  drainPermits(): Promise<number>;
}
