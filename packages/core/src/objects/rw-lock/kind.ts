import type { HolderInfo } from '../inspect/info.js';
import { holder, waiterList } from '../inspect/snapshot.js';
import { byName, defineKind } from '../object-kind.js';
import { ReadWriteLock, type RReadWriteLock } from './read-write-lock.js';
import { RW_KIND, RwLockStore } from './rw-lock-store.js';

/** {live, owner, leaseEnd, count, token, …} of the script: the live readers. */
function readerHolders(readers: readonly (string | number | null)[], now: number): HolderInfo[] {
  const holders: HolderInfo[] = [];
  for (let i = 1; i + 3 < readers.length; i += 4) {
    holders.push(holder(String(readers[i]), readers[i + 2], readers[i + 3], Number(readers[i + 1]) - now, now, { mode: 'read' }));
  }
  return holders;
}

/** The read-write lock (`getReadWriteLock`). */
export const READ_WRITE_LOCK = defineKind({
  name: 'readWriteLock',
  getter: (site) => {
    const { deployment, context } = site;
    // A refused writer holds new readers back for a watchdog lease, renewed by its tries.
    const stores = {
      read: new RwLockStore(deployment, 'read', context.commandTimeoutMs, context.watchdogTimeoutMs),
      write: new RwLockStore(deployment, 'write', context.commandTimeoutMs, context.watchdogTimeoutMs),
    };
    // Either store renews and clears holds of both modes.
    context.kinds.register(RW_KIND, stores.read);
    return byName(site, 'lock name', (name): RReadWriteLock => new ReadWriteLock(name, context, stores));
  },
  recognise: ({ types, fields }) => {
    const rwKeys = types.readers === 'zset' || types.writers === 'zset';
    return (types.main === 'hash' && (fields.mode !== null || rwKeys)) || (types.main === 'none' && rwKeys) ? 'shown' : undefined;
  },
  describe: ({ now, mainPttl: ttlMs, fields, readers, writers }, base) => {
    const { w: writer, wc, wt } = fields;
    const mode: HolderInfo['mode'] = fields.mode === 'write' || fields.mode === 'read' ? fields.mode : undefined;
    const holders: HolderInfo[] = [];
    if (writer) holders.push(holder(writer, wc, wt, ttlMs, now, { mode: 'write' }));
    holders.push(...readerHolders(readers, now));
    return {
      ...base,
      kind: 'readWriteLock',
      mode,
      ttlMs,
      holders,
      holderCount: (writer ? 1 : 0) + Number(readers[0] ?? 0),
      waiters: waiterList(writers, now),
      waiterCount: Number(writers[0] ?? 0),
    };
  },
});
