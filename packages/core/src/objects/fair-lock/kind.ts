import { holder, waiterList } from '../inspect/snapshot.js';
import { parseHold } from '../lock/hold-record.js';
import { ReentrantLock } from '../lock/reentrant-lock.js';
import type { RLock } from '../lock/types.js';
import { byName, defineKind } from '../object-kind.js';
import { FairLockStore } from './fair-lock-store.js';
import type { FairLockInfo } from './info.js';
import { fairLockKeys } from './keys.js';

export const FAIR_LOCK = defineKind({
  name: 'fairLock',
  description: 'lock that serves its waiters in arrival order',
  method: 'getFairLock',
  getter: (site) => {
    const { deployment, context } = site;
    // A waiter keeps its place for a watchdog lease, renewed by its tries (at least every third of it).
    const store = new FairLockStore(deployment, context.commandTimeoutMs, context.watchdogTimeoutMs, context.clientId, context);
    return byName(site, 'lock name', (name): RLock<string> => new ReentrantLock<string>(name, context, store));
  },
  keeps: (prefix, name) => {
    const { lock, queue, waiters } = fairLockKeys(prefix, name, '');
    return { lock: { key: lock, type: 'hash' }, queue: { key: queue, type: 'list' }, waiters: { key: waiters, type: 'zset', by: queue } };
  },
  recognise: ({ keys: { lock, queue, waiters } }) => {
    const hold = parseHold(lock.fields);
    if (lock.type === 'none' ? false : !hold || hold.once) return undefined;
    // Its waiter queue: the list, or the waiter leases (a free fair lock with waiters has no hold).
    if (queue.type === 'list' || waiters.type === 'zset') return 'shown';
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
