import { lockKeys, type LockKeys } from '../lock/keys.js';

/**
 * The Redis names of one fair lock as one client sees them: the lock's, its
 * waiter queue, and the client's own wake channel `<wakePrefix><clientId>` as
 * `channel`, where a release hands the lock to this client's queue head
 * (public layout, see the core README).
 */
export interface FairLockKeys extends LockKeys {
  /** `<prefix>:{<name>}:release:`: a script that hands the lock over publishes on it followed by the head's clientId. */
  readonly wakePrefix: string;
  /** List `<prefix>:{<name>}:queue`: waiting owners in arrival order. */
  readonly queue: string;
  /** Zset `<prefix>:{<name>}:waiters`: waiting owner → end of its waiter lease (server ms). */
  readonly waiters: string;
  /** Hash `<prefix>:{<name>}:tickets`: waiting owner → `<op> <leaseMs>` of the try that set its waiter lease (a hand-off names the op and lives at most leaseMs). */
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
