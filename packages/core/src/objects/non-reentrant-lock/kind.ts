import { parseHold } from '../lock/hold-record.js';
import { ClientWakeScripts } from '../lock/client-wake-scripts.js';
import { LOCK } from '../lock/kind.js';
import { EXCLUSIVE_LOCK, type LockVariant } from '../lock/lock-store.js';
import { serverLockGetter } from '../lock/server-lock-getter.js';
import { holderDetail } from '../inspect/snapshot.js';
import { defineKind } from '../object-kind.js';
import type { NonReentrantLockInfo } from './info.js';

const NAME = 'nonReentrantLock';

/** The lock, once per owner: its scripts refuse an owner's second acquisition in Redis and mark the hold (field n). */
export const NON_REENTRANT: LockVariant = Object.freeze({ ...EXCLUSIVE_LOCK, object: 'non_reentrant_lock', reentrant: false });

/** The lock's keys, scripts and report, with the variant's once flag. */
export const NON_REENTRANT_LOCK = defineKind({
  name: NAME,
  description: 'lock a task cannot take twice',
  method: 'getNonReentrantLock',
  getter: (site) => serverLockGetter(site, NON_REENTRANT, ClientWakeScripts),
  keeps: (prefix, name) => LOCK.keeps(prefix, name),
  // lock/acquire.lua marks the hold with field n (hold-record); a fair variant's queue keys are not read here.
  recognise: ({ keys: { lock } }) => (parseHold(lock.fields)?.once ? 'likely' : undefined),
  // Recognised, it has a hold: the lock's report of it, under its own kind.
  describe: (snapshot, base): NonReentrantLockInfo => ({ ...LOCK.describe(snapshot, base), kind: NAME }),
  detail: (info) => holderDetail(info),
  forceUnlock: (lock) => lock.forceUnlock(),
});
