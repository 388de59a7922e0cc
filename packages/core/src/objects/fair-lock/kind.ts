import { parseHold } from '../lock/hold-record.js';
import { EXCLUSIVE_LOCK, type LockVariant } from '../lock/lock-store.js';
import { serverLockGetter } from '../lock/server-lock-getter.js';
import { defineKind } from '../object-kind.js';
import { FairQueueScripts, QUEUED_IN_REDIS } from '../fair-queue/fair-queue-scripts.js';
import type { FairLockInfo } from '../fair-queue/info.js';
import { describeFairQueue, fairQueueKeeps } from '../fair-queue/report.js';
import { holderDetail } from '../inspect/snapshot.js';

/** The lock in arrival order: Redis keeps the queue, so newcomers try at once and a waiter's tries renew its place. */
export const FAIR: LockVariant = Object.freeze({ ...EXCLUSIVE_LOCK, ...QUEUED_IN_REDIS, object: 'fair_lock' });

export const FAIR_LOCK = defineKind({
  name: 'fairLock',
  description: 'lock that serves its waiters in arrival order',
  method: 'getFairLock',
  getter: (site) => serverLockGetter(site, FAIR, FairQueueScripts),
  keeps: fairQueueKeeps,
  recognise: ({ keys: { lock, queue, waiters } }) => {
    const hold = parseHold(lock.fields);
    if (lock.type === 'none' ? false : !hold || hold.once) return undefined;
    // Its waiter queue: the list, or the waiter leases. A free one with waiters has no hold, and a variant's looks the same.
    if (queue.type === 'list' || waiters.type === 'zset') return hold ? 'shown' : 'likely';
    return hold ? 'fits' : undefined;
  },
  describe: (snapshot, base): FairLockInfo => describeFairQueue(snapshot, base, 'fairLock'),
  detail: (info) => holderDetail(info),
  forceUnlock: (lock) => lock.forceUnlock(),
});
