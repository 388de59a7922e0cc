import { clientNoticePrefix, fenceKey, objectKey } from '../names.js';

/** The Redis names of one reentrant lock (public layout, see the core README). */
export interface LockKeys {
  /** Hash `<prefix>:{<name>}`: the hold, `<owner>` → count, `t` token, `o` last op, `n` once (includes/hold-record.lua). */
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

/** Names kept per store: enough for a busy client's working set, few enough that touching many names does not keep them. */
export const KEY_CACHE_LIMIT = 1_024;

/** Where a lock's names come from: its store's layout. */
export interface KeySource {
  keysOf(prefix: string, name: string): LockKeys;
}

export function lockKeys(prefix: string, name: string): LockKeys {
  const lock = objectKey(prefix, name);
  return keysOfLock(lock, fenceKey(prefix, lock), clientNoticePrefix(prefix));
}

/**
 * One client's lock names, built once per name and source: the hot path builds no key strings.
 * Bounded by KEY_CACHE_LIMIT per source, oldest first out, so the heap does not grow with every name used.
 */
export class LockKeyCache {
  private readonly bySource = new Map<KeySource, Map<string, LockKeys>>();

  constructor(private readonly prefix: string) {}

  keysOf(source: KeySource, name: string): LockKeys {
    let cache = this.bySource.get(source);
    if (cache === undefined) this.bySource.set(source, (cache = new Map<string, LockKeys>()));
    const cached = cache.get(name);
    if (cached) return cached;
    if (cache.size >= KEY_CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
    const keys = source.keysOf(this.prefix, name);
    cache.set(name, keys);
    return keys;
  }

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
 * A lock's names as one client sees them: `channel` is its own wake channel `<wakePrefix><clientId>`,
 * where a release wakes this client's longest waiter in its turn (public layout, see the core README).
 */
export interface PlainLockKeys extends LockKeys {
  /** `<prefix>:{<name>}:release:`: a script that wakes a client publishes on it followed by the clientId. */
  readonly wakePrefix: string;
  /** Zset `<prefix>:{<name>}:clients`: client id → when it registered as waiting (server µs). */
  readonly clients: string;
}

export function plainLockKeys(prefix: string, name: string, clientId: string): PlainLockKeys {
  return withWakes(lockKeys(prefix, name), clientId);
}

/** Zset `<lock>:clients` of lock key `lock`: the clients waiting for it. */
export const clientsKey = (lock: string): string => `${lock}:clients`;

// One literal with every field, not a spread: a spread's copy gets its own hidden class per cached name.
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
    clients: clientsKey(keys.lock),
  };
}
