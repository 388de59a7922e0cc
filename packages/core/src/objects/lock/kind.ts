import { holder, type LayoutSnapshot } from '../inspect/snapshot.js';
import { byName, defineKind } from '../object-kind.js';
import { ReentrantLock } from './reentrant-lock.js';
import { ServerLockStore } from './server-lock-store.js';
import type { RLock } from './types.js';

/** A Redlock master's lease lock, `<clientId>:<taskId>|<op>`: its owner. */
const leaseOwner = (snapshot: LayoutSnapshot): string | undefined => /^([^|:]+:[^|:]+)\|./.exec(snapshot.value ?? '')?.[1];

/** The reentrant lock (`getLock`). */
export const LOCK = defineKind({
  name: 'lock',
  getter: (site) => {
    const { deployment, context } = site;
    const store = new ServerLockStore(deployment, context.commandTimeoutMs);
    context.kinds.register(store.kind, store);
    return byName(site, 'lock name', (name): RLock<string> => new ReentrantLock<string>(name, context, store));
  },
  // A hash with an owner is a lock unless a field says it is another kind; a
  // fair lock with nobody queued looks the same (`{ kind: 'fairLock' }` says so).
  recognise: (snapshot) => {
    if (leaseOwner(snapshot)) return 'shown';
    const { owner, kind, mode } = snapshot.fields;
    return owner && !kind && !mode ? 'likely' : undefined;
  },
  describe: (snapshot, base) => {
    const { now, mainPttl: ttlMs } = snapshot;
    const lease = leaseOwner(snapshot);
    const { owner, count, token } = snapshot.fields;
    const holders = [lease ? holder(lease, 1, undefined, ttlMs, now) : holder(owner ?? '', count, token, ttlMs, now)];
    return { ...base, kind: 'lock', ttlMs, holders, holderCount: 1 };
  },
});
