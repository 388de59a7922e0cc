import type { ObjectInfoBase, WaiterInfo } from '../inspect/info.js';

/** A read-write lock (`getReadWriteLock`): one writer or many readers, and waiting writers. */
export interface ReadWriteLockInfo extends ObjectInfoBase {
  /** The kind: a read-write lock. */
  readonly kind: 'readWriteLock';
  /** `write` while a writer holds it (readers of the same owner may too), `read` while only readers do. */
  readonly mode: 'read' | 'write' | undefined;
  /** PTTL of the main key: the longest lease of its holders, -2 when free. */
  readonly ttlMs: number;
  /** Writers waiting (they hold back new readers), soonest waiter lease end first. */
  readonly waiters: readonly WaiterInfo[];
  /** How many writers wait in all. */
  readonly waiterCount: number;
}
