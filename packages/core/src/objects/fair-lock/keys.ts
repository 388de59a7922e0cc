import { lockKeys, type LockKeys } from '../lock/keys.js';

/** The Redis names of one fair lock: the lock's, plus its waiter queue (public layout, see the core README). */
export interface FairLockKeys extends LockKeys {
  /** List `<prefix>:{<name>}:queue`: waiting owners in arrival order. */
  readonly queue: string;
  /** Zset `<prefix>:{<name>}:waiters`: waiting owner → end of its waiter lease (server ms). */
  readonly waiters: string;
}

export function fairLockKeys(prefix: string, name: string): FairLockKeys {
  const keys = lockKeys(prefix, name);
  return { ...keys, queue: `${keys.lock}:queue`, waiters: `${keys.lock}:waiters` };
}
