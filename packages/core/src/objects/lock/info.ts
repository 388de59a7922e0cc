import type { ObjectInfoBase } from '../inspect/info.js';

/** A reentrant lock (`getLock`); on a Redlock master one holder of count 1 (the client counts reentry) and no token. */
export interface LockInfo extends ObjectInfoBase {
  /** The kind: a reentrant lock. */
  readonly kind: 'lock';
  /** PTTL of the main key: lease left in ms, -1 without TTL. */
  readonly ttlMs: number;
}
