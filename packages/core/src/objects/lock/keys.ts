import { clientNoticePrefix, fenceKey, objectKey } from '../names.js';

/**
 * The Redis names of one reentrant lock (public layout, see the core README),
 * built once per name and cached: the hot path builds no key strings.
 */
export interface LockKeys {
  /** String `<prefix>:{<name>}`: the hold, `<head> <token> <owner>` (includes/hold-record.lua). */
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

/**
 * Names kept per source (a store): enough for every lock a busy client works
 * on at once to hit, small enough (~0.3 MB) that a client touching 100,000
 * names does not keep them.
 */
export const KEY_CACHE_LIMIT = 1_024;

/** Where a lock's names come from: a store's own layout (`keysOf`), else the reentrant lock's. */
export interface KeySource {
  keysOf?(prefix: string, name: string): LockKeys;
}

/** The names of lock `name` under `prefix`. */
export function lockKeys(prefix: string, name: string): LockKeys {
  const lock = objectKey(prefix, name);
  return keysOfLock(lock, fenceKey(prefix, lock), clientNoticePrefix(prefix));
}

/**
 * One client's lock names (under its prefix), built once per name and source:
 * the hot path builds no key strings. Bounded by KEY_CACHE_LIMIT per source,
 * the oldest name first out: a client that touches very many names rebuilds
 * some of them, and its heap does not grow with the names it ever used.
 */
export class LockKeyCache {
  private readonly bySource = new Map<KeySource, Map<string, LockKeys>>();

  constructor(private readonly prefix: string) {}

  keysOf(source: KeySource, name: string): LockKeys {
    let cache = this.bySource.get(source);
    if (cache === undefined) {
      cache = new Map();
      this.bySource.set(source, cache);
    }
    const cached = cache.get(name);
    if (cached) return cached;
    if (cache.size >= KEY_CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
    const keys = source.keysOf?.(this.prefix, name) ?? lockKeys(this.prefix, name);
    cache.set(name, keys);
    return keys;
  }

  /** Names cached, over every source. */
  get size(): number {
    let size = 0;
    for (const cache of this.bySource.values()) size += cache.size;
    return size;
  }
}

/** The names around lock key `lock`, with `fence` as its fence counter and `notices` as the holders' notice prefix ('' where none is used). */
export function keysOfLock(lock: string, fence = '', notices = ''): LockKeys {
  return { lock, released: `${lock}:released`, channel: `${lock}:release`, fence, cancelled: `${lock}:cancelled`, notices };
}

/**
 * The Redis names of one lock or non-reentrant lock as one client sees them:
 * the lock's, its waiting clients, and the client's own wake channel
 * `<wakePrefix><clientId>` as `channel`, where a release wakes this client's
 * longest waiter when its turn comes (public layout, see the core README).
 */
export interface PlainLockKeys extends LockKeys {
  /** `<prefix>:{<name>}:release:`: a script that wakes a client publishes on it followed by the clientId. */
  readonly wakePrefix: string;
  /** Zset `<prefix>:{<name>}:clients`: client id → when it registered as waiting (server µs). */
  readonly clients: string;
}

/** The names of lock `name` under `prefix`, as client `clientId` sees them. */
export function plainLockKeys(prefix: string, name: string, clientId: string): PlainLockKeys {
  return withWakes(lockKeys(prefix, name), clientId);
}

/** The names around lock key `lock` as client `clientId` sees them (its fence and notices unknown: what a release needs). */
export function plainKeysOfLock(lock: string, clientId: string): PlainLockKeys {
  return withWakes(keysOfLock(lock), clientId);
}

// One literal with every field, not a spread of the lock's names plus three:
// a spread's copies got a hidden class (and its transitions) each, ~0.5 KB per
// cached name, and their last fields out of the object.
function withWakes(keys: LockKeys, clientId: string): PlainLockKeys {
  const wakePrefix = `${keys.channel}:`;
  return {
    lock: keys.lock,
    released: keys.released,
    channel: `${wakePrefix}${clientId}`,
    fence: keys.fence,
    cancelled: keys.cancelled,
    notices: keys.notices,
    wakePrefix,
    clients: `${keys.lock}:clients`,
  };
}
