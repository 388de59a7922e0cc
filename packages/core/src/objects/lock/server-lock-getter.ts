import type { Deployment } from '../../connection/deployment.js';
import type { EngineContext } from '../../engine/engine-context.js';
import { byName, type KindSite } from '../object-kind.js';
import type { LockKeys } from './keys.js';
import type { LockVariant } from './lock-store.js';
import { ReentrantLock } from './reentrant-lock.js';
import { ServerLockStore, type LockScripts } from './server-lock-store.js';
import type { RLock } from './types.js';

/**
 * A kind's getter of the family's locks on one deployment: its variant and scripts make one store, whose holds the client renews.
 * `object`: the lock's rlock.object when another kind uses it (a leader election's: `leader`).
 */
export function serverLockGetter<K extends LockKeys>(
  site: KindSite,
  variant: LockVariant,
  /** The scripts of one way of waiting, made once per client. */
  Scripts: new (deployment: Deployment, context: EngineContext) => LockScripts<K>,
): (name: string, object?: string) => RLock<string> {
  const { deployment, context } = site;
  const store = new ServerLockStore<K>(deployment, context.commandTimeoutMs, context.keyPrefix, variant, new Scripts(deployment, context));
  context.kinds.register(store.kind, store);
  return byName(site, 'lock name', (name, object?: string): RLock<string> => new ReentrantLock<string>(name, context, store, object));
}
