import { lockKeys, type LockKeys } from '../lock/keys.js';

/** The Redis names of one read-write lock (public layout, see the core README). */
export interface RwLockKeys extends LockKeys {
  /** Zset `<prefix>:{<name>}:readers`: reading owner → end of its own lease (server ms). */
  readonly readers: string;
  /** Zset `<prefix>:{<name>}:writers`: waiting writer → end of its waiter lease (server ms). */
  readonly writers: string;
}

export function rwLockKeys(prefix: string, name: string): RwLockKeys {
  const keys = lockKeys(prefix, name);
  return { ...keys, readers: readersKey(keys.lock), writers: `${keys.lock}:writers` };
}

/** Zset `<lock>:readers` of state hash `lock`: its readers' leases. */
export const readersKey = (lock: string): string => `${lock}:readers`;
