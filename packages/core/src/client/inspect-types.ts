/**
 * What `client.inspect(name)` and `client.list()` report: one object's state,
 * read from the public data layout (see the core README) in one read-only
 * script call.
 */

/** The kinds of coordination object the data layout tells apart. */
export type ObjectKind = 'lock' | 'fairLock' | 'readWriteLock' | 'semaphore' | 'permitExpirableSemaphore' | 'countDownLatch';

/** One holder of an object: a lock's owner, a reader or the writer of a read-write lock, a leased permit. */
export interface HolderInfo {
  /** The owner id `<clientId>:<taskId>`; for a permit, the client id of its holder. */
  readonly owner: string;
  /** The owner's hold count (reentrant acquisitions not yet released); 1 for a permit. */
  readonly count: number;
  /** The hold's fencing token (a decimal string), undefined when the layout has none. */
  readonly token: string | undefined;
  /** Lease left in ms, on the server's clock; -1 for a key without TTL. */
  readonly ttlMs: number;
  /**
   * When the hold was first acquired, in Unix ms of the server's clock, read
   * from its fencing token (tokens are the server's `TIME` in µs unless the
   * slot's counter had run ahead of it): an estimate; undefined without a
   * token.
   */
  readonly acquiredAtMs: number | undefined;
  /** For a read-write lock: which side it holds. */
  readonly mode?: 'read' | 'write';
  /** For a permit-expirable semaphore: the permit's id (`semaphore.release(id)` frees it). */
  readonly id?: string;
}

/** One waiter queued in Redis: a fair lock's queued owner, or a read-write lock's waiting writer. */
export interface WaiterInfo {
  /** The waiting owner id `<clientId>:<taskId>`. */
  readonly owner: string;
  /** Waiter lease left in ms (server clock): a waiter that stops trying drops out when it ends. */
  readonly ttlMs: number;
}

/** What every report has. */
export interface ObjectInfoBase {
  /** The object's name, as given to `getLock(name)` and the like. */
  readonly name: string;
  /** Its main key `<prefix>:{<name>}`. */
  readonly key: string;
  /** The server's clock when it was read, Unix ms. */
  readonly serverTimeMs: number;
  /**
   * Who holds it, at most `limit` of them (lock: 0 or 1; read-write lock: the
   * writer first, then readers by lease end; permits by lease end). Empty for
   * a semaphore and a latch, whose permits and counts nobody owns.
   */
  readonly holders: readonly HolderInfo[];
  /** How many hold it in all (may exceed `holders.length`, which the limit bounds). */
  readonly holderCount: number;
}

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
