import { holder, waiterList, type LayoutSnapshot } from '../inspect/snapshot.js';
import { ReentrantLock } from '../lock/reentrant-lock.js';
import type { RLock } from '../lock/types.js';
import { byName, defineKind } from '../object-kind.js';
import { FairLockStore } from './fair-lock-store.js';

/** Its waiter queue: the list, or the waiter leases (a free fair lock with waiters has no hash). */
const queued = ({ types }: LayoutSnapshot): boolean => types.queue === 'list' || types.waiters === 'zset';

/** The fair lock (`getFairLock`). */
export const FAIR_LOCK = defineKind({
  name: 'fairLock',
  getter: (site) => {
    const { deployment, context } = site;
    // A waiter keeps its place in the queue for a watchdog lease: its tries
    // (at least every third of it) renew it. Its holds renew as the lock's.
    const store = new FairLockStore(deployment, context.commandTimeoutMs, context.watchdogTimeoutMs, context.clientId);
    return byName(site, 'lock name', (name): RLock<string> => new ReentrantLock<string>(name, context, store));
  },
  recognise: (snapshot) => {
    const { types, fields } = snapshot;
    if (types.main === 'hash' ? !fields.owner || fields.kind || fields.mode : types.main !== 'none') return undefined;
    if (queued(snapshot)) return 'shown';
    return types.main === 'hash' ? 'fits' : undefined;
  },
  describe: ({ now, mainPttl: ttlMs, fields, queue }, base) => {
    const holders = fields.owner ? [holder(fields.owner, fields.count, fields.token, ttlMs, now)] : [];
    return { ...base, kind: 'fairLock', ttlMs, holders, holderCount: holders.length, waiters: waiterList(queue, now), waiterCount: Number(queue[0] ?? 0) };
  },
});
