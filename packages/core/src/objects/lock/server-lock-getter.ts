import { byName, type KindSite } from '../object-kind.js';
import type { LockKeys } from './keys.js';
import type { LockVariant } from './lock-store.js';
import { ReentrantLock } from './reentrant-lock.js';
import { ServerLockStore, type LockScripts } from './server-lock-store.js';
import type { RLock } from './types.js';

/** A kind's getter of the family's locks on one deployment: its variant and scripts make one store, whose holds the client renews. */
export function serverLockGetter<K extends LockKeys>(site: KindSite, variant: LockVariant, scripts: LockScripts<K>): (name: string) => RLock<string> {
  const { deployment, context } = site;
  const store = new ServerLockStore<K>({ deployment, keyPrefix: context.keyPrefix, replayWindowMs: context.commandTimeoutMs, variant, scripts });
  context.kinds.register(store.kind, store);
  return byName(site, 'lock name', (name): RLock<string> => new ReentrantLock<string>(name, context, store));
}
