import type { ClientIdentity } from '../../connection/client-names.js';

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
  /** When first acquired, server Unix ms estimated from the fencing token (the server's `TIME` in µs unless the counter ran ahead); else undefined. */
  readonly acquiredAtMs: number | undefined;
  /** For a read-write lock: which side it holds. */
  readonly mode?: 'read' | 'write';
  /** For a permit-expirable semaphore: the permit's id (`semaphore.release(id)` frees it). */
  readonly id?: string;
  /** The holder's client (`name` option, host, pid) from CLIENT LIST; absent for an ioredis instance passed in, or when CLIENT LIST failed. */
  readonly client?: ClientIdentity;
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
  /** Who holds it, at most `limit` (a read-write lock's writer first, then by lease end); empty for a semaphore and a latch. */
  readonly holders: readonly HolderInfo[];
  /** How many hold it in all (may exceed `holders.length`, which the limit bounds). */
  readonly holderCount: number;
}

/** A bare integer at the main key with no kind marker beside it (written by hand, or by rlock before layout 6); pass `{ kind }` to `inspect` to read it as one. */
export interface SemaphoreOrLatchInfo extends ObjectInfoBase {
  /** The kind: a bare integer. */
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
