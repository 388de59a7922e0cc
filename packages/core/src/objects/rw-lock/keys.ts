import { clientNoticePrefix, fenceKey, objectKey } from '../names.js';
import { keysOfLock, type LockKeys } from '../lock/keys.js';

/** The Redis names of one read-write lock (public layout, see the core README). */
export interface RwLockKeys extends LockKeys {
  /** Zset `<prefix>:{<name>}:readers`: reading owner → end of its own lease (server ms). */
  readonly readers: string;
  /** Zset `<prefix>:{<name>}:writers`: waiting writer → end of its waiter lease (server ms). */
  readonly writers: string;
}

export function rwLockKeys(prefix: string, name: string): RwLockKeys {
  const lock = objectKey(prefix, name);
  return keysOfRwLock(lock, fenceKey(prefix, lock), clientNoticePrefix(prefix));
}

/** The names around state hash `lock`, with `fence` as its fence counter and `notices` as the holders' notice prefix ('' where none is used). */
export function keysOfRwLock(lock: string, fence = '', notices = ''): RwLockKeys {
  return { ...keysOfLock(lock, fence, notices), readers: `${lock}:readers`, writers: `${lock}:writers` };
}
