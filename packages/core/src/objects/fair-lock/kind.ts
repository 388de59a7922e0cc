import { holder, waiterList } from '../inspect/snapshot.js';
import { parseHold } from '../lock/hold-record.js';
import { EXCLUSIVE_LOCK, type LockVariant } from '../lock/lock-store.js';
import { serverLockGetter } from '../lock/server-lock-getter.js';
import { defineKind } from '../object-kind.js';
import { FairLockScripts } from './fair-lock-scripts.js';
import type { FairLockInfo } from './info.js';
import { fairLockKeys } from './keys.js';

/** The lock in arrival order: Redis keeps the queue, so newcomers try at once and a waiter's tries renew its place. */
export const FAIR: LockVariant = Object.freeze({ ...EXCLUSIVE_LOCK, object: 'fair_lock', queueLocally: false, waitersKeepPlace: true });

export const FAIR_LOCK = defineKind({
  name: 'fairLock',
  description: 'lock that serves its waiters in arrival order',
  method: 'getFairLock',
  getter: (site) => serverLockGetter(site, FAIR, FairLockScripts),
  keeps: (prefix, name) => {
    const { lock, queue, waiters } = fairLockKeys(prefix, name, '');
    return { lock: { key: lock, type: 'hash' }, queue: { key: queue, type: 'list' }, waiters: { key: waiters, type: 'zset', by: queue } };
  },
  recognise: ({ keys: { lock, queue, waiters } }) => {
    const hold = parseHold(lock.fields);
    if (lock.type === 'none' ? false : !hold || hold.once) return undefined;
    // Its waiter queue: the list, or the waiter leases. A free one with waiters has no hold, and a variant's looks the same.
    if (queue.type === 'list' || waiters.type === 'zset') return hold ? 'shown' : 'likely';
    return hold ? 'fits' : undefined;
  },
  describe: ({ now, keys: { lock, queue, waiters } }, base): FairLockInfo => {
    const hold = parseHold(lock.fields);
    const holders = hold ? [holder(hold.owner, hold.count, hold.token, lock.pttl, now)] : [];
    const queued = queue.type === 'list';
    return {
      ...base,
      kind: 'fairLock',
      ttlMs: lock.pttl,
      holders,
      holderCount: holders.length,
      waiters: queued ? waiterList(waiters, now) : [],
      waiterCount: queued ? waiters.live : 0,
    };
  },
  detail: (info) => (info.holders[0] ? `owner ${info.holders[0].owner} count ${info.holders[0].count}` : 'free'),
  forceUnlock: (lock) => lock.forceUnlock(),
});
