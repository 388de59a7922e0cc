import { keysOfLock, objectKey, type LockKeys } from '@org/rlock-core/internal';

/**
 * The Redis names of one lease lock: the reentrant lock's names without the
 * fence counter, which a lease lock never touches (finding the counter's tag
 * scans CRC16s, tens of ms for a process's first lock).
 */
export function leaseLockKeys(prefix: string, name: string): LockKeys {
  return keysOfLock(objectKey(prefix, name));
}
