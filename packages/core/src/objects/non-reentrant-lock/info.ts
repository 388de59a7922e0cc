import type { ObjectInfoBase } from '../inspect/info.js';

/** A non-reentrant lock (`getNonReentrantLock`): its holder's count is always 1. */
export interface NonReentrantLockInfo extends ObjectInfoBase {
  /** The kind: a non-reentrant lock. */
  readonly kind: 'nonReentrantLock';
  /** PTTL of the main key: lease left in ms, -1 without TTL. */
  readonly ttlMs: number;
}
