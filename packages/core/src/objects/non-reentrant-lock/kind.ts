import { holder } from '../inspect/snapshot.js';
import { parseHold } from '../lock/hold-record.js';
import { ClientWakeScripts, lockWaits } from '../lock/client-wake-scripts.js';
import { plainLockKeys } from '../lock/keys.js';
import { EXCLUSIVE_LOCK, type LockVariant } from '../lock/lock-store.js';
import { serverLockGetter } from '../lock/server-lock-getter.js';
import { defineKind } from '../object-kind.js';
import type { NonReentrantLockInfo } from './info.js';

const NAME = 'nonReentrantLock';

/** The lock, once per owner: its scripts refuse an owner's second acquisition in Redis and mark the hold (field n). */
export const NON_REENTRANT: LockVariant = Object.freeze({ ...EXCLUSIVE_LOCK, object: 'non_reentrant_lock', reentrant: false });

/** The lock's keys and scripts, with the variant's once flag. */
export const NON_REENTRANT_LOCK = defineKind({
  name: NAME,
  description: 'lock a task cannot take twice',
  method: 'getNonReentrantLock',
  getter: (site) => serverLockGetter(site, NON_REENTRANT, new ClientWakeScripts(site.deployment, site.context.commandTimeoutMs, lockWaits(site.context))),
  keeps: (prefix, name) => {
    const { lock, clients } = plainLockKeys(prefix, name, '');
    return { lock: { key: lock, type: 'hash' }, clients: { key: clients, type: 'zset' } };
  },
  // lock/acquire.lua marks the hold with field n (hold-record); a fair variant's queue keys are not read here.
  recognise: ({ keys: { lock } }) => (parseHold(lock.fields)?.once ? 'likely' : undefined),
  describe: ({ now, keys: { lock } }, base): NonReentrantLockInfo => {
    const hold = parseHold(lock.fields);
    const holders = hold ? [holder(hold.owner, hold.count, hold.token, lock.pttl, now)] : [];
    return { ...base, kind: NAME, ttlMs: lock.pttl, holders, holderCount: holders.length };
  },
  detail: (info) => (info.holders[0] ? `owner ${info.holders[0].owner} count ${info.holders[0].count}` : 'free'),
  forceUnlock: (lock) => lock.forceUnlock(),
});
