import type { WaitOptions } from '../wait-options.js';

/**
 * A counting semaphore (`java.util.concurrent.Semaphore`, Redisson's
 * RSemaphore) shared by every client of one deployment. Permits are **not
 * owned**: any caller, task or process may release permits another one
 * acquired, and nothing is released on its own.
 *
 * **A crashed holder's permits are gone for good**: a process that dies (or a
 * caller that forgets `release`) between `acquire` and `release` never gives
 * its permits back, and the semaphore has that many fewer until someone calls
 * `addPermits`. When holders can crash, use the permit-expirable semaphore
 * (`client.getPermitExpirableSemaphore(name)`): each of its permits has a lease
 * and comes back by itself when the lease lapses.
 *
 * Counts (`permits`, `delta`) are integers from 1 to 2^31 − 1 (`addPermits`
 * also takes negative ones); anything else is an InvalidArgumentError, thrown
 * before any command is sent.
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
  /**
   * Sets the number of permits, only when the semaphore is not set yet.
   * Resolves true when it set them, false when it was set already.
   */
  trySetPermits(permits: number): Promise<boolean>;
  /**
   * Adds `delta` permits; a negative `delta` removes them (the available count
   * may go below zero: acquirers then wait until enough come back). Resolves
   * the available count after.
   */
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
  /**
   * Like `acquire`, but resolves false when the permits were not available
   * within `waitMs` (default 0: one try).
   */
  tryAcquire(options?: WaitOptions): Promise<boolean>;
  /** Tries to take `permits` permits: as `tryAcquire(options)`, with a count (1 to 2^31−1). */
  tryAcquire(permits: number, options?: WaitOptions): Promise<boolean>;
  /**
   * Gives `permits` (default 1) back and wakes waiters. Anyone may release.
   * When tasks of this client wait, the permits go straight to them (in
   * arrival order) with no Redis call, since Redis counts them taken already.
   * The release goes back through Redis instead once another client has
   * announced a waiter that waited long, or after 255 local hand-offs in a row
   * (or 50 ms of them), so other clients' waiters get their turn.
   */
  release(permits?: number): Promise<void>;
  /** The available count (0 when not set; negative after `addPermits` removed more than there was). */
  availablePermits(): Promise<number>;
  /** Takes every available permit at once; resolves how many (0 when none, or the count was negative: it becomes 0). */
  drainPermits(): Promise<number>;
}
