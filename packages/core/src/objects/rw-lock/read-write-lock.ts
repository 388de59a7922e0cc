import type { EngineContext } from '../../engine/engine-context.js';
import { ReentrantLock } from '../lock/reentrant-lock.js';
import type { RLock } from '../lock/types.js';
import type { RwLockStore } from './rw-lock-store.js';

/** A read-write lock: shared reads, exclusive writes (Redisson's RReadWriteLock). */
export interface RReadWriteLock {
  /** The read-write lock's name. */
  readonly name: string;
  /**
   * The shared lock: any number of tasks read at once, each with its own
   * lease, token and signal. A waiting writer holds new readers of other tasks
   * back (a stream of readers cannot starve writers); a task already reading,
   * or writing (a downgrade), may always read.
   */
  readLock(): RLock<string>;
  /**
   * The exclusive lock: one task writes, nobody reads. A task that holds only
   * the read lock gets IllegalMonitorStateError at once when it asks for it
   * (waiting would deadlock it); release the read lock first.
   */
  writeLock(): RLock<string>;
}

/** {@link RReadWriteLock} on the engine: both views are core's ReentrantLock, over one store per mode. */
export class ReadWriteLock implements RReadWriteLock {
  private readonly read: RLock<string>;
  private readonly write: RLock<string>;

  constructor(
    readonly name: string,
    ctx: EngineContext,
    stores: { readonly read: RwLockStore; readonly write: RwLockStore },
  ) {
    this.read = new ReentrantLock<string>(name, ctx, stores.read);
    this.write = new ReentrantLock<string>(name, ctx, stores.write);
  }

  readLock(): RLock<string> {
    return this.read;
  }

  writeLock(): RLock<string> {
    return this.write;
  }
}
