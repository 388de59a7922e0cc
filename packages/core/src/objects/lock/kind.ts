import type { KeyRead } from '../inspect/snapshot.js';
import { holder, holderDetail } from '../inspect/snapshot.js';
import { parseHold } from './hold-record.js';
import { defineKind } from '../object-kind.js';
import type { LockInfo } from './info.js';
import { ClientWakeScripts } from './client-wake-scripts.js';
import { plainLockKeys } from './keys.js';
import { EXCLUSIVE_LOCK } from './lock-store.js';
import { serverLockGetter } from './server-lock-getter.js';

/** A Redlock master's lease lock, `<clientId>:<taskId>|<op>`: its owner. */
const leaseOwner = (read: KeyRead): string | undefined => /^([^|:]+:[^|:]+)\|./.exec(read.value ?? '')?.[1];

export const LOCK = defineKind({
  name: 'lock',
  description: 'reentrant lock',
  method: 'getLock',
  getter: (site) => serverLockGetter(site, EXCLUSIVE_LOCK, ClientWakeScripts),
  keeps: (prefix, name) => {
    const { lock, clients } = plainLockKeys(prefix, name, '');
    return { lock: { key: lock, type: 'hash' }, clients: { key: clients, type: 'zset' } };
  },
  // A variant that keeps other keys beside this hash, with none of them there, looks the same (its `{ kind }` says so).
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
  detail: (info) => holderDetail(info),
  forceUnlock: (lock) => lock.forceUnlock(),
});
