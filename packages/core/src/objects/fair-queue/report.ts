import { holder, waiterList, type KeptKey, type LayoutSnapshot, type ReportBase } from '../inspect/snapshot.js';
import { parseHold } from '../lock/hold-record.js';
import type { FairLockInfo } from './info.js';
import { fairLockKeys } from './keys.js';

/** The keys a fair lock keeps: its hold, the waiter queue and the waiters' leases. */
export type FairQueuePart = 'lock' | 'queue' | 'waiters';

export function fairQueueKeeps(prefix: string, name: string): Readonly<Record<FairQueuePart, KeptKey>> {
  const { lock, queue, waiters } = fairLockKeys(prefix, name, '');
  return { lock: { key: lock, type: 'hash' }, queue: { key: queue, type: 'list' }, waiters: { key: waiters, type: 'zset', by: queue } };
}

/** A fair lock's report under `kind`: its holder, and its waiters in arrival order. */
export function describeFairQueue<Kind extends string>(
  { now, keys: { lock, queue, waiters } }: LayoutSnapshot<FairQueuePart>,
  base: ReportBase,
  kind: Kind,
): Omit<FairLockInfo, 'kind'> & { readonly kind: Kind } {
  const hold = parseHold(lock.fields);
  const holders = hold ? [holder(hold.owner, hold.count, hold.token, lock.pttl, now)] : [];
  const queued = queue.type === 'list';
  return {
    ...base,
    kind,
    ttlMs: lock.pttl,
    holders,
    holderCount: holders.length,
    waiters: queued ? waiterList(waiters, now) : [],
    waiterCount: queued ? waiters.live : 0,
  };
}
