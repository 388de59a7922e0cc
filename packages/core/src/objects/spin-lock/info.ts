import type { ObjectInfoBase } from '../inspect/info.js';

/** A spin lock (`getSpinLock`), as `inspect` reports a lock's keys when asked for `{ kind: 'spinLock' }`: the lock's report. */
export interface SpinLockInfo extends ObjectInfoBase {
  /** The kind: a spin lock. */
  readonly kind: 'spinLock';
  /** PTTL of the main key: lease left in ms, -1 without TTL. */
  readonly ttlMs: number;
}
