import type { FairLockInfo } from '../fair-queue/info.js';

/** A non-reentrant fair lock (`getNonReentrantFairLock`): a fair lock whose holder's count is at most 1. */
export interface NonReentrantFairLockInfo extends Omit<FairLockInfo, 'kind'> {
  /** The kind: a non-reentrant fair lock. */
  readonly kind: 'nonReentrantFairLock';
}
