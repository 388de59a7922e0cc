import type { ObjectInfoBase, WaiterInfo } from '../inspect/info.js';

/** A fair lock (`getFairLock`): a lock with a queue of waiters in Redis. */
export interface FairLockInfo extends ObjectInfoBase {
  /** The kind: a fair lock. */
  readonly kind: 'fairLock';
  /** PTTL of the main key (-2 when free with waiters queued). */
  readonly ttlMs: number;
  /** Queued waiters in arrival order (the head is served next), at most `limit`. */
  readonly waiters: readonly WaiterInfo[];
  /** How many wait in all. */
  readonly waiterCount: number;
}
