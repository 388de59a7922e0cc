import { lockKeys, type LockKeys } from '../lock/keys.js';

/** The Redis names of one read-write lock (public layout, see the core README). */
export interface RwLockKeys extends LockKeys {
  /** Zset `<prefix>:{<name>}:readers`: reading owner → end of its own lease (server ms). */
  readonly readers: string;
  /** Zset `<prefix>:{<name>}:writers`: waiting writer → end of its waiter lease (server ms). */
  readonly writers: string;
}

/** The lock's names (`lock` is the state hash, `channel` its announcements), plus readers and waiting writers. */
export function rwLockKeys(prefix: string, name: string): RwLockKeys {
  const keys = lockKeys(prefix, name);
  return { ...keys, readers: `${keys.lock}:readers`, writers: `${keys.lock}:writers` };
}
