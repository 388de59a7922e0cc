import { plainLockKeys, type PlainLockKeys } from '../lock/keys.js';

/**
 * A fair lock's names as one client sees them: `channel` is its wake channel `<wakePrefix><clientId>`,
 * where a release hands the lock to this client's queue head (public layout, see the core README).
 */
export interface FairLockKeys extends Omit<PlainLockKeys, 'clients'> {
  /** List `<prefix>:{<name>}:queue`: waiting owners in arrival order. */
  readonly queue: string;
  /** Zset `<prefix>:{<name>}:waiters`: waiting owner → end of its waiter lease (server ms). */
  readonly waiters: string;
  /** Hash `<prefix>:{<name>}:tickets`: waiting owner → `<op> <leaseMs>` of the try that set its waiter lease. */
  readonly tickets: string;
}

/** The plain lock's names and wake channels without its waiting clients (the queue stands in for them), plus the queue's. */
export function fairLockKeys(prefix: string, name: string, clientId: string): FairLockKeys {
  const { clients: _queued, ...keys } = plainLockKeys(prefix, name, clientId);
  return { ...keys, queue: `${keys.lock}:queue`, waiters: `${keys.lock}:waiters`, tickets: `${keys.lock}:tickets` };
}
