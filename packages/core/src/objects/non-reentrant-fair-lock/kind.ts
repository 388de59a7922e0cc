import { FairQueueScripts, QUEUED_IN_REDIS } from '../fair-queue/fair-queue-scripts.js';
import { describeFairQueue, fairQueueKeeps } from '../fair-queue/report.js';
import { holderDetail } from '../inspect/snapshot.js';
import { parseHold } from '../lock/hold-record.js';
import { EXCLUSIVE_LOCK, type LockVariant } from '../lock/lock-store.js';
import { serverLockGetter } from '../lock/server-lock-getter.js';
import { defineKind } from '../object-kind.js';
import type { NonReentrantFairLockInfo } from './info.js';

const NAME = 'nonReentrantFairLock';

/** The fair lock's order with the non-reentrant lock's once flag: the fair scripts refuse an owner's second acquisition, which queues. */
export const NON_REENTRANT_FAIR: LockVariant = Object.freeze({ ...EXCLUSIVE_LOCK, ...QUEUED_IN_REDIS, object: 'non_reentrant_fair_lock', reentrant: false });

/** The fair lock's keys, scripts and report, given the once flag. */
export const NON_REENTRANT_FAIR_LOCK = defineKind({
  name: NAME,
  description: 'fair lock a task cannot take twice',
  method: 'getNonReentrantFairLock',
  getter: (site) => serverLockGetter(site, NON_REENTRANT_FAIR, FairQueueScripts),
  keeps: fairQueueKeeps,
  // Its hold is marked (field n) once claimed; a free one with waiters, or a hand-off not yet claimed, looks like a fair lock's.
  recognise: ({ keys: { lock, queue, waiters } }) => {
    const hold = parseHold(lock.fields);
    if (lock.type !== 'none' && !hold) return undefined;
    const queued = queue.type === 'list' || waiters.type === 'zset';
    if (hold?.once) return queued ? 'shown' : 'fits';
    return queued ? 'fits' : undefined;
  },
  describe: (snapshot, base): NonReentrantFairLockInfo => describeFairQueue(snapshot, base, NAME),
  detail: (info) => holderDetail(info),
  forceUnlock: (lock) => lock.forceUnlock(),
});
