import { bareIntegerReport } from '../inspect/snapshot.js';
import { byName, defineKind } from '../object-kind.js';
import { RedisSemaphore } from './semaphore.js';
import { SemaphoreStore } from './semaphore-store.js';
import type { RSemaphore } from './types.js';

/** The semaphore (`getSemaphore`). */
export const SEMAPHORE = defineKind({
  ...bareIntegerReport('semaphore', 'permits'),
  getter: (site) => byName(site, 'semaphore name', (name): RSemaphore => new RedisSemaphore(name, site.context, new SemaphoreStore(site.deployment, site.context.commandTimeoutMs))),
});
