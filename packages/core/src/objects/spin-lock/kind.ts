import { holderDetail } from '../inspect/snapshot.js';
import { parseHold } from '../lock/hold-record.js';
import { LOCK } from '../lock/kind.js';
import { ReentrantLock } from '../lock/reentrant-lock.js';
import type { RLock } from '../lock/types.js';
import { byName, defineKind } from '../object-kind.js';
import type { SpinLockInfo } from './info.js';
import { spinBackoff, type SpinLockOptions } from './options.js';
import { SpinLockStore } from './spin-lock-store.js';

const NAME = 'spinLock';

/** Redisson's RSpinLock: the lock, waited for by back-off instead of pub/sub. */
export const SPIN_LOCK = defineKind({
  name: NAME,
  description: 'lock whose waiters back off instead of subscribing',
  method: 'getSpinLock',
  getter: (site) => {
    const { deployment, context } = site;
    // One store per back-off plan: lock objects of one plan share their state, as a kind's objects do.
    const stores = new Map<string, SpinLockStore>();
    const storeOf = (options: SpinLockOptions | undefined): SpinLockStore => {
      const plan = spinBackoff(options);
      const id = `${plan.initialDelayMs}/${plan.maxDelayMs}/${plan.multiplier}`;
      const store = stores.get(id) ?? new SpinLockStore(deployment, context, plan);
      // Holds renew and clear alike whatever their plan: the first store renews every spin lock's.
      if (stores.size === 0) context.kinds.register(store.kind, store);
      stores.set(id, store);
      return store;
    };
    return byName(site, 'lock name', (name, options?: SpinLockOptions): RLock<string> => new ReentrantLock<string>(name, context, storeOf(options)));
  },
  keeps: (prefix, name) => LOCK.keeps(prefix, name),
  // The lock's keys: read as a lock unless asked for `{ kind: 'spinLock' }`.
  recognise: ({ keys: { lock } }) => {
    const hold = parseHold(lock.fields);
    return hold && !hold.once ? 'fits' : undefined;
  },
  // Recognised, it has a hold: the lock's report of it, under its own kind.
  describe: (snapshot, base): SpinLockInfo => ({ ...LOCK.describe(snapshot, base), kind: NAME }),
  detail: (info) => holderDetail(info),
  forceUnlock: (lock) => lock.forceUnlock(),
});
