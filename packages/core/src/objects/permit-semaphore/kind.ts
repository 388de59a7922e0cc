import type { HolderInfo } from '../inspect/info.js';
import { fitsBareInteger, holder, integerValue } from '../inspect/snapshot.js';
import { byName, defineKind } from '../object-kind.js';
import { PermitExpirableSemaphore } from './permit-semaphore.js';
import { PERMIT_KIND, PermitStore } from './permit-store.js';
import type { RPermitExpirableSemaphore } from './types.js';

/** The permit-expirable semaphore (`getPermitExpirableSemaphore`). */
export const PERMIT_EXPIRABLE_SEMAPHORE = defineKind({
  name: 'permitExpirableSemaphore',
  getter: (site) => {
    const { deployment, context } = site;
    // Leased permits: the watchdog renews them in batches of their own kind.
    const store = new PermitStore(deployment, context.commandTimeoutMs, context.clientId);
    context.kinds.register(PERMIT_KIND, store);
    return byName(site, 'semaphore name', (name): RPermitExpirableSemaphore => new PermitExpirableSemaphore(name, context, store));
  },
  // Its leases show it (with or without a pool: permits leased from a count
  // never set); a bare pool is a bare integer, as a semaphore's.
  recognise: (snapshot) => {
    const { types } = snapshot;
    const leased = types.leases === 'zset' || types.holders === 'hash';
    if (leased && (types.main === 'none' || integerValue(snapshot) !== undefined)) return 'shown';
    return fitsBareInteger(snapshot);
  },
  describe: (snapshot, base) => {
    const { permits, now } = snapshot;
    const holders: HolderInfo[] = [];
    for (let i = 2; i + 2 < permits.length; i += 3) {
      const id = String(permits[i]);
      const owner = id.includes(':') ? id.slice(0, id.lastIndexOf(':')) : id;
      holders.push(holder(owner, 1, permits[i + 2], Number(permits[i + 1]) - now, now, { id }));
    }
    return {
      ...base,
      kind: 'permitExpirableSemaphore',
      // Lapsed permits go back to the pool with the next call: count them as available.
      permits: (integerValue(snapshot) ?? 0) + Number(permits[1] ?? 0),
      holders,
      holderCount: Number(permits[0] ?? 0),
    };
  },
});
