import { keysOfLock, objectKey, type LockKeys } from '@org/rlock-core/internal';

/** A lease lock's names: the reentrant lock's without the fence counter (no slot-tag scan). */
export function leaseLockKeys(prefix: string, name: string): LockKeys {
  return keysOfLock(objectKey(prefix, name));
}
