import { holder, integerValue, markedBareInteger } from '../inspect/snapshot.js';
import { byName, defineKind } from '../object-kind.js';
import type { PermitExpirableSemaphoreInfo } from './info.js';
import { permitSemaphoreKeys } from './keys.js';
import { PermitExpirableSemaphore } from './permit-semaphore.js';
import { PERMIT_KIND, PermitStore } from './permit-store.js';
import type { RPermitExpirableSemaphore } from './types.js';

export const PERMIT_EXPIRABLE_SEMAPHORE = defineKind({
  name: 'permitExpirableSemaphore',
  description: 'semaphore of leased permits with ids',
  method: 'getPermitExpirableSemaphore',
  getter: (site) => {
    const { deployment, context } = site;
    const store = new PermitStore(deployment, context.commandTimeoutMs, context.clientId);
    context.kinds.register(PERMIT_KIND, store);
    return byName(site, 'semaphore name', (name): RPermitExpirableSemaphore => new PermitExpirableSemaphore(name, context, store));
  },
  keeps: (prefix, name) => {
    const { permits, leases, holders, kind } = permitSemaphoreKeys(prefix, name);
    return {
      permits: { key: permits, type: 'string' },
      leases: { key: leases, type: 'zset' },
      holders: { key: holders, type: 'hash', by: leases },
      marker: { key: kind, type: 'string' },
    };
  },
  // Leases show it (even without a pool: permits leased from a count never set); a pool alone, its kind marker.
  recognise: ({ keys: { permits, leases, holders, marker } }) => {
    const leased = leases.type === 'zset' || holders.type === 'hash';
    if (leased && (permits.type === 'none' || integerValue(permits) !== undefined)) return 'shown';
    return markedBareInteger(permits, marker, 'permitExpirableSemaphore');
  },
  describe: ({ now, keys: { permits, leases, holders } }, base): PermitExpirableSemaphoreInfo => ({
    ...base,
    kind: 'permitExpirableSemaphore',
    // Lapsed permits go back to the pool with the next call: count them as available.
    permits: (integerValue(permits) ?? 0) + leases.lapsed,
    // A permit's id is `<clientId>:<n>`: its holder is the client.
    holders: leases.entries.map(({ member: id, score }) =>
      holder(id.includes(':') ? id.slice(0, id.lastIndexOf(':')) : id, 1, holders.fields[id], score - now, now, { id }),
    ),
    holderCount: leases.live,
  }),
  detail: (info) => `permits ${info.permits}`,
});
