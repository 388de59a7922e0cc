/**
 * What `client.inspect(name)` and `client.list()` report: one object's state,
 * read from the public data layout (see the core README) in one read-only
 * script call.
 */

import type { ObjectInfoBase, WaiterInfo } from '../objects/inspect/info.js';
import { KINDS } from '../objects/kinds.js';

export type { ObjectInfoBase, HolderInfo, WaiterInfo } from '../objects/inspect/info.js';

/** The kinds of coordination object the data layout tells apart. */
export type ObjectKind = 'lock' | 'fairLock' | 'readWriteLock' | 'semaphore' | 'permitExpirableSemaphore' | 'countDownLatch' | 'nonReentrantLock';

/**
 * A reentrant lock (`getLock`): a hash with its owner, count and token. Read on
 * a Redlock master, its lease lock (a string `<owner>|<op>`): one holder, count
 * 1 (the Redlock client counts reentrancy itself), no token.
 */
export interface LockInfo extends ObjectInfoBase {
  /** The kind: a reentrant lock. */
  readonly kind: 'lock';
  /** PTTL of the main key: lease left in ms, -1 without TTL. */
  readonly ttlMs: number;
}

/** A fair lock (`getFairLock`): a lock with a queue of waiters in Redis. */
export interface FairLockInfo extends ObjectInfoBase {
  /** The kind: a fair lock. */
  readonly kind: 'fairLock';
  /** PTTL of the main key (-2 when free with waiters queued). */
  readonly ttlMs: number;
  /** Queued waiters in arrival order (the head is served next), at most `limit`. */
  readonly waiters: readonly WaiterInfo[];
  /** How many wait in all. */
  readonly waiterCount: number;
}

/** A read-write lock (`getReadWriteLock`): one writer or many readers, and waiting writers. */
export interface ReadWriteLockInfo extends ObjectInfoBase {
  /** The kind: a read-write lock. */
  readonly kind: 'readWriteLock';
  /** `write` while a writer holds it (readers of the same owner may too), `read` while only readers do. */
  readonly mode: 'read' | 'write' | undefined;
  /** PTTL of the main key: the longest lease of its holders, -2 when free. */
  readonly ttlMs: number;
  /** Writers waiting (they hold back new readers), soonest waiter lease end first. */
  readonly waiters: readonly WaiterInfo[];
  /** How many writers wait in all. */
  readonly waiterCount: number;
}

/** A semaphore (`getSemaphore`): available permits, owned by nobody. */
export interface SemaphoreInfo extends ObjectInfoBase {
  /** The kind: a semaphore. */
  readonly kind: 'semaphore';
  /** Available permits (negative after `addPermits` took more than there were). */
  readonly permits: number;
}

/** A permit-expirable semaphore (`getPermitExpirableSemaphore`): available permits and leased ones. */
export interface PermitExpirableSemaphoreInfo extends ObjectInfoBase {
  /** The kind: a permit-expirable semaphore. */
  readonly kind: 'permitExpirableSemaphore';
  /** Available permits, counting those whose lease has lapsed (the next call gives them back). */
  readonly permits: number;
}

/** A count-down latch (`getCountDownLatch`): its remaining count. A latch at zero has no key. */
export interface CountDownLatchInfo extends ObjectInfoBase {
  /** The kind: a count-down latch. */
  readonly kind: 'countDownLatch';
  /** The remaining count. */
  readonly count: number;
}

/**
 * A non-reentrant lock (`getNonReentrantLock`): a lock's hash, marked with
 * field `kind` = `nonReentrantLock`; its holder's count is always 1.
 */
export interface NonReentrantLockInfo extends ObjectInfoBase {
  /** The kind: a non-reentrant lock. */
  readonly kind: 'nonReentrantLock';
  /** PTTL of the main key: lease left in ms, -1 without TTL. */
  readonly ttlMs: number;
}

/**
 * A bare integer at the main key: a semaphore's available permits or a
 * latch's count, which the layout stores alike. Pass `{ kind: 'semaphore' }`
 * or `{ kind: 'countDownLatch' }` to `inspect` to read it as one.
 */
export interface SemaphoreOrLatchInfo extends ObjectInfoBase {
  /** The kind: a bare integer: a semaphore's permits or a latch's count. */
  readonly kind: 'semaphoreOrLatch';
  /** The integer stored. */
  readonly value: number;
}

/** A key under the prefix that is none of rlock's objects (another program's key). */
export interface UnknownObjectInfo extends ObjectInfoBase {
  /** The kind: not one of rlock's objects. */
  readonly kind: 'unknown';
  /** Its Redis type (`TYPE`). */
  readonly redisType: string;
}

/** One object's state, by kind. */
export type ObjectInfo =
  | LockInfo
  | FairLockInfo
  | ReadWriteLockInfo
  | SemaphoreInfo
  | PermitExpirableSemaphoreInfo
  | CountDownLatchInfo
  | NonReentrantLockInfo
  | SemaphoreOrLatchInfo
  | UnknownObjectInfo;

/** Options of `client.inspect(name, options)`. */
export interface InspectOptions {
  /**
   * The kind you expect, to settle what the layout alone cannot tell: a bare
   * integer is a semaphore or a latch; a fair lock with nobody queued looks
   * like a lock. A layout that shows another kind wins over it.
   * @default undefined (read from the layout)
   */
  readonly kind?: ObjectKind;
  /** Most holders and waiters listed (1 to 10,000); the counts are always complete. @default 100 */
  readonly limit?: number;
}

/** Options of `client.list(options)`. */
export interface ListOptions {
  /**
   * A glob over object names (Redis `MATCH` syntax: `*`, `?`, `[abc]`, `\`
   * escapes), without braces: `order:*`.
   * @default '*'
   */
  readonly match?: string;
  /** Most objects per page, and the `COUNT` hint of each `SCAN` (1 to 10,000). @default 100 */
  readonly limit?: number;
  /** Most holders and waiters listed per object (1 to 10,000). @default 10 */
  readonly entryLimit?: number;
  /** Stops the listing: the next page rejects with `signal.reason`. @default undefined */
  readonly signal?: AbortSignal;
}

/** Every {@link ObjectKind}: what `inspect`'s `{ kind }` (and the CLI's `--kind`) accepts. */
export const OBJECT_KINDS: readonly ObjectKind[] = Object.freeze(KINDS.map((kind) => kind.name));

/** The defaults of {@link InspectOptions} and {@link ListOptions}, in one frozen object. */
export const INSPECT_DEFAULTS = Object.freeze({
  /** Holders and waiters listed by `inspect`. */
  limit: 100,
  /** Objects per page of `list`. */
  pageSize: 100,
  /** Holders and waiters listed per object by `list`. */
  entryLimit: 10,
  /** Every name. */
  match: '*',
});

/** The largest `limit`, `entryLimit` and page size accepted. */
export const MAX_INSPECT_LIMIT = 10_000;
