import { holder } from '../inspect/snapshot.js';
import { ReentrantLock } from '../lock/reentrant-lock.js';
import { ServerLockStore } from '../lock/server-lock-store.js';
import type { RLock } from '../lock/types.js';
import { byName, defineKind } from '../object-kind.js';

const NAME = 'nonReentrantLock';

/**
 * The non-reentrant lock (`getNonReentrantLock`, as Redisson's): the lock's
 * keys, scripts and engine, with acquire-3 refusing an owner's second
 * acquisition, so two of one task are never both granted, even in flight at
 * once. The lock's store renews and clears its holds.
 */
export const NON_REENTRANT_LOCK = defineKind({
  name: NAME,
  getter: (site) => {
    const store = new ServerLockStore(site.deployment, site.context.commandTimeoutMs, NAME);
    return byName(site, 'lock name', (name): RLock<string> => new ReentrantLock<string>(name, site.context, store));
  },
  // acquire-3 marks the hash with field kind.
  recognise: ({ fields }) => (fields.kind === NAME ? 'shown' : undefined),
  describe: ({ now, mainPttl: ttlMs, fields }, base) => {
    const holders = fields.owner ? [holder(fields.owner, fields.count, fields.token, ttlMs, now)] : [];
    return { ...base, kind: NAME, ttlMs, holders, holderCount: holders.length };
  },
});
