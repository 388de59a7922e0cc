import { lockKeys, type LockKeys } from '../lock/keys.js';

/**
 * A fair lock's names as one client sees them: `channel` is its wake channel `<wakePrefix><clientId>`,
 * where a release hands the lock to this client's queue head (public layout, see the core README).
 */
export interface FairLockKeys extends LockKeys {
  /** `<prefix>:{<name>}:release:`, followed by the head's clientId. */
  readonly wakePrefix: string;
  /** List `<prefix>:{<name>}:queue`: waiting owners in arrival order. */
  readonly queue: string;
  /** Zset `<prefix>:{<name>}:waiters`: waiting owner → end of its waiter lease (server ms). */
  readonly waiters: string;
  /** Hash `<prefix>:{<name>}:tickets`: waiting owner → `<op> <leaseMs>` of the try that set its waiter lease. */
  readonly tickets: string;
}

export function fairLockKeys(prefix: string, name: string, clientId: string): FairLockKeys {
  const keys = lockKeys(prefix, name);
  const wakePrefix = `${keys.channel}:`;
  return {
    ...keys,
    wakePrefix,
    channel: `${wakePrefix}${clientId}`,
    queue: `${keys.lock}:queue`,
    waiters: `${keys.lock}:waiters`,
    tickets: `${keys.lock}:tickets`,
  };
}
