import type { HolderInfo } from '../inspect/info.js';
import { holder, waiterList } from '../inspect/snapshot.js';
import { byName, defineKind } from '../object-kind.js';
import type { ReadWriteLockInfo } from './info.js';
import { rwLockKeys } from './keys.js';
import { readWriteLock, type RReadWriteLock } from './read-write-lock.js';
import { RW_KIND, RwLockStore } from './rw-lock-store.js';

export const READ_WRITE_LOCK = defineKind({
  name: 'readWriteLock',
  description: 'lock with shared readers and one writer',
  method: 'getReadWriteLock',
  getter: (site) => {
    const { deployment, context } = site;
    const stores = { read: new RwLockStore(deployment, context, 'read'), write: new RwLockStore(deployment, context, 'write') };
    // Either store renews and clears holds of both modes.
    context.kinds.register(RW_KIND, stores.read);
    return byName(site, 'lock name', (name): RReadWriteLock => readWriteLock(name, context, stores));
  },
  keeps: (prefix, name) => {
    const { lock, readers, writers } = rwLockKeys(prefix, name);
    return { lock: { key: lock, type: 'hash' }, readers: { key: readers, type: 'zset' }, writers: { key: writers, type: 'zset' } };
  },
  recognise: ({ keys: { lock, readers, writers } }) => {
    const rwKeys = readers.type === 'zset' || writers.type === 'zset';
    return (lock.type === 'hash' && (lock.fields.mode !== undefined || rwKeys)) || (lock.type === 'none' && rwKeys) ? 'shown' : undefined;
  },
  describe: ({ now, keys: { lock, readers, writers } }, base): ReadWriteLockInfo => {
    const { w: writer, wc, wt, mode } = lock.fields;
    const holders: HolderInfo[] = [];
    if (writer) holders.push(holder(writer, wc, wt, lock.pttl, now, { mode: 'write' }));
    for (const { member, score } of readers.entries) {
      holders.push(holder(member, lock.fields[`r:${member}`], lock.fields[`rt:${member}`], score - now, now, { mode: 'read' }));
    }
    return {
      ...base,
      kind: 'readWriteLock',
      mode: mode === 'write' || mode === 'read' ? mode : undefined,
      ttlMs: lock.pttl,
      holders,
      holderCount: (writer ? 1 : 0) + readers.live,
      waiters: waiterList(writers, now),
      waiterCount: writers.live,
    };
  },
  detail: (info) => (info.mode ? `mode ${info.mode}` : 'free'),
  // Its write lock's force-unlock frees the writer and every reader.
  forceUnlock: (lock) => lock.writeLock().forceUnlock(),
});
