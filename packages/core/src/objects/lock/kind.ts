import type { KeyRead } from '../inspect/snapshot.js';
import { holder } from '../inspect/snapshot.js';
import { parseHold } from './hold-record.js';
import { byName, defineKind } from '../object-kind.js';
import type { LockInfo } from './info.js';
import { plainLockKeys } from './keys.js';
import { ReentrantLock } from './reentrant-lock.js';
import { lockWaits, ServerLockStore } from './server-lock-store.js';
import type { RLock } from './types.js';

/** A Redlock master's lease lock, `<clientId>:<taskId>|<op>`: its owner. */
const leaseOwner = (read: KeyRead): string | undefined => /^([^|:]+:[^|:]+)\|./.exec(read.value ?? '')?.[1];

export const LOCK = defineKind({
  name: 'lock',
  description: 'reentrant lock',
  method: 'getLock',
  getter: (site) => {
    const { deployment, context } = site;
    const store = new ServerLockStore(deployment, context.commandTimeoutMs, '', lockWaits(context));
    context.kinds.register(store.kind, store);
    // `object`: its rlock.object when another kind uses the lock (a leader election's: `leader`).
    return byName(site, 'lock name', (name, object?: string): RLock<string> => new ReentrantLock<string>(name, context, store, object));
  },
  keeps: (prefix, name) => {
    const { lock, clients } = plainLockKeys(prefix, name, '');
    return { lock: { key: lock, type: 'hash' }, clients: { key: clients, type: 'zset' } };
  },
  // A fair lock with nobody queued looks the same (`{ kind: 'fairLock' }` says so).
  recognise: ({ keys: { lock } }) => {
    if (leaseOwner(lock)) return 'shown';
    const hold = parseHold(lock.fields);
    return hold && !hold.once ? 'likely' : undefined;
  },
  describe: ({ now, keys: { lock } }, base): LockInfo => {
    const lease = leaseOwner(lock);
    const hold = parseHold(lock.fields);
    const holders = [lease ? holder(lease, 1, undefined, lock.pttl, now) : holder(hold?.owner ?? '', hold?.count, hold?.token, lock.pttl, now)];
    return { ...base, kind: 'lock', ttlMs: lock.pttl, holders, holderCount: 1 };
  },
  detail: (info) => (info.holders[0] ? `owner ${info.holders[0].owner} count ${info.holders[0].count}` : 'free'),
  forceUnlock: (lock) => lock.forceUnlock(),
});
