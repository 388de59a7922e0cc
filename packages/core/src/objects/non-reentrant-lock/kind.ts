import { holder } from '../inspect/snapshot.js';
import { parseHold } from '../lock/hold-record.js';
import { plainLockKeys } from '../lock/keys.js';
import { ReentrantLock } from '../lock/reentrant-lock.js';
import { lockWaits, ServerLockStore } from '../lock/server-lock-store.js';
import type { RLock } from '../lock/types.js';
import { byName, defineKind } from '../object-kind.js';
import type { NonReentrantLockInfo } from './info.js';

const NAME = 'nonReentrantLock';

/** The lock's keys and engine; lock/acquire.lua refuses an owner's second acquisition in Redis. */
export const NON_REENTRANT_LOCK = defineKind({
  name: NAME,
  description: 'lock a task cannot take twice',
  method: 'getNonReentrantLock',
  getter: (site) => {
    const store = new ServerLockStore(site.deployment, site.context.commandTimeoutMs, NAME, lockWaits(site.context));
    return byName(site, 'lock name', (name): RLock<string> => new ReentrantLock<string>(name, site.context, store));
  },
  keeps: (prefix, name) => {
    const { lock, clients } = plainLockKeys(prefix, name, '');
    return { lock: { key: lock, type: 'hash' }, clients: { key: clients, type: 'zset' } };
  },
  // lock/acquire.lua marks the hold with field n (hold-record).
  recognise: ({ keys: { lock } }) => (parseHold(lock.fields)?.once ? 'shown' : undefined),
  describe: ({ now, keys: { lock } }, base): NonReentrantLockInfo => {
    const hold = parseHold(lock.fields);
    const holders = hold ? [holder(hold.owner, hold.count, hold.token, lock.pttl, now)] : [];
    return { ...base, kind: NAME, ttlMs: lock.pttl, holders, holderCount: holders.length };
  },
  detail: (info) => (info.holders[0] ? `owner ${info.holders[0].owner} count ${info.holders[0].count}` : 'free'),
  forceUnlock: (lock) => lock.forceUnlock(),
});
