import { clientNoticePrefix, fenceKey, objectKey } from '../names.js';

/**
 * The Redis names of one reentrant lock (public layout, see the core README),
 * built once per name and cached: the hot path builds no key strings.
 */
export interface LockKeys {
  /** Hash `<prefix>:{<name>}` with fields owner, count, token, op (and kind for a non-reentrant lock). */
  readonly lock: string;
  /** String `<prefix>:{<name>}:released`: op id of the last full release (replay window). */
  readonly released: string;
  /** Channel `<prefix>:{<name>}:release`: 'unlock' or 'force' on each full release. */
  readonly channel: string;
  /** String `<prefix>:{<slot tag>}:fence`: last fencing token of the lock's hash slot. */
  readonly fence: string;
  /** Hash `<prefix>:{<name>}:cancelled`: field `<owner>:<op>` for each acquire cancelled before it ran. */
  readonly cancelled: string;
  /** `<prefix>:client:`: a holder's notice channel is this plus its client id ('' where no holder is told). */
  readonly notices: string;
}

const CACHE_LIMIT = 10_000;

/** The names of lock `name` under `prefix`. */
export function lockKeys(prefix: string, name: string): LockKeys {
  const lock = objectKey(prefix, name);
  return keysOfLock(lock, fenceKey(prefix, lock), clientNoticePrefix(prefix));
}

/**
 * One client's lock names, built once per name: a getLock() on the hot path
 * builds no key strings. Bounded: a client that touches very many names
 * rebuilds some of them.
 */
export class LockKeyCache {
  private readonly cache = new Map<string, LockKeys>();

  keysOf(prefix: string, name: string): LockKeys {
    const cached = this.cache.get(name);
    if (cached) return cached;
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    const keys = lockKeys(prefix, name);
    this.cache.set(name, keys);
    return keys;
  }
}

/** The names around lock key `lock`, with `fence` as its fence counter and `notices` as the holders' notice prefix ('' where none is used). */
export function keysOfLock(lock: string, fence = '', notices = ''): LockKeys {
  return { lock, released: `${lock}:released`, channel: `${lock}:release`, fence, cancelled: `${lock}:cancelled`, notices };
}
