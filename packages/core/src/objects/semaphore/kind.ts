import { integerValue, markedBareInteger } from '../inspect/snapshot.js';
import { byName, defineKind } from '../object-kind.js';
import type { SemaphoreInfo } from './info.js';
import { semaphoreKeys } from './keys.js';
import { RedisSemaphore } from './semaphore.js';
import { SemaphoreStore } from './semaphore-store.js';
import type { RSemaphore } from './types.js';

/** The semaphore (`getSemaphore`): a bare integer, as a latch's count, told apart by its kind marker. */
export const SEMAPHORE = defineKind({
  name: 'semaphore',
  description: 'permits owned by nobody',
  method: 'getSemaphore',
  getter: (site) => {
    const { deployment, context } = site;
    return byName(site, 'semaphore name', (name): RSemaphore => new RedisSemaphore(name, context, new SemaphoreStore(deployment, context.commandTimeoutMs)));
  },
  keeps: (prefix, name) => {
    const keys = semaphoreKeys(prefix, name);
    return { permits: { key: keys.permits, type: 'string' }, marker: { key: keys.kind, type: 'string' } };
  },
  recognise: ({ keys: { permits, marker } }) => markedBareInteger(permits, marker, 'semaphore'),
  describe: ({ keys: { permits } }, base): SemaphoreInfo => ({ ...base, kind: 'semaphore', holders: [], holderCount: 0, permits: integerValue(permits) ?? 0 }),
  detail: (info) => `permits ${info.permits}`,
});
