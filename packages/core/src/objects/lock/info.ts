import type { ObjectInfoBase } from '../inspect/info.js';

/**
 * A reentrant lock (`getLock`): a hold record with its owner, count and token. Read on
 * a Redlock master, its lease lock (a string `<owner>|<op>`): one holder, count
 * 1 (the Redlock client counts reentrancy itself), no token.
 */
export interface LockInfo extends ObjectInfoBase {
  /** The kind: a reentrant lock. */
  readonly kind: 'lock';
  /** PTTL of the main key: lease left in ms, -1 without TTL. */
  readonly ttlMs: number;
}
