import type { EngineContext } from '../../engine/engine-context.js';
import { ReentrantLock } from '../lock/reentrant-lock.js';
import type { RLock } from '../lock/types.js';
import type { RwLockStore } from './rw-lock-store.js';

/** A read-write lock: shared reads, exclusive writes (Redisson's RReadWriteLock). */
export interface RReadWriteLock {
  /** The read-write lock's name. */
  readonly name: string;
  /** The shared lock, each reader with its own lease, token and signal; a waiting writer holds back new readers of other tasks, so they cannot starve it. */
  readLock(): RLock<string>;
  /** The exclusive lock; a task holding only the read lock is refused it with IllegalMonitorStateError (waiting would deadlock). */
  writeLock(): RLock<string>;
}

/** {@link RReadWriteLock} on the engine: both views are core's ReentrantLock, over one store per mode. */
export function readWriteLock(name: string, ctx: EngineContext, stores: { readonly read: RwLockStore; readonly write: RwLockStore }): RReadWriteLock {
  const read = new ReentrantLock<string>(name, ctx, stores.read);
  const write = new ReentrantLock<string>(name, ctx, stores.write);
  return { name, readLock: () => read, writeLock: () => write };
}
