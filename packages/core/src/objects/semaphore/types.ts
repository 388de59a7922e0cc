import type { WaitOptions } from '../wait-options.js';

/**
 * A counting semaphore (Redisson's RSemaphore) shared by every client of one
 * deployment. Permits are **not owned**: anyone may release them.
 *
 * **A crashed holder's permits are gone for good** (until `addPermits`); when
 * holders can crash, use `client.getPermitExpirableSemaphore(name)`, whose
 * permits are leased.
 *
 * Counts are integers from 1 to 2^31 − 1 (`addPermits` also takes negative
 * ones); anything else throws InvalidArgumentError before any command.
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
   * Takes `permits` permits (default 1), waiting until that many are available
   * (or `waitMs`; then LockAcquireTimeoutError), or until `signal` aborts
   * (rejects with its reason). Works inside and outside tasks.
   * @throws InvalidArgumentError for a bad count or option
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
   * Gives `permits` (default 1) back and wakes waiters. Anyone may release.
   * Waiting tasks of this client get them directly (no Redis call), except
   * after 255 hand-offs (or 50 ms of them) or when another client announced a
   * long wait: then they go back through Redis, so other clients get a turn.
   */
  release(permits?: number): Promise<void>;
  /** The available count (0 when not set; negative after `addPermits` removed more than there was). */
  availablePermits(): Promise<number>;
  /** Takes every available permit at once; resolves how many (0 when none, or the count was negative: it becomes 0). */
  drainPermits(): Promise<number>;
}
