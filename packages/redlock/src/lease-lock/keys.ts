import { keysOfLock, objectKey, type LockKeys } from '@org/rlock-core/internal';

/**
 * The Redis names of one lease lock: the reentrant lock's names without the
 * fence counter, which a lease lock never touches (so no CRC16 scan for its
 * slot tag, see fenceTagForSlot).
 */
export function leaseLockKeys(prefix: string, name: string): LockKeys {
  return keysOfLock(objectKey(prefix, name));
}
