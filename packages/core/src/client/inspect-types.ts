import type { SemaphoreOrLatchInfo, UnknownObjectInfo } from '../objects/inspect/info.js';
import { KINDS, type KindInfo, type KindName } from '../objects/kinds.js';

export type { ObjectInfoBase, HolderInfo, WaiterInfo, SemaphoreOrLatchInfo, UnknownObjectInfo } from '../objects/inspect/info.js';

/** The kinds of coordination object the data layout tells apart: the names in {@link OBJECT_KINDS}. */
export type ObjectKind = KindName;

/**
 * One object's state, told apart by `kind`: a registered kind's report
 * ({@link @org/rlock-core!LockInfo | LockInfo}, {@link @org/rlock-core!SemaphoreInfo | SemaphoreInfo}…), a bare integer of open kind
 * ({@link SemaphoreOrLatchInfo}) or another program's key ({@link UnknownObjectInfo}).
 */
export type ObjectInfo = KindInfo | SemaphoreOrLatchInfo | UnknownObjectInfo;

/** Options of `client.inspect(name, options)`. */
export interface InspectOptions {
  /** The kind expected where the layout cannot tell (a bare integer, a fair lock with nobody queued); the layout wins. @default undefined */
  readonly kind?: ObjectKind;
  /** Most holders and waiters listed (1 to 10,000); the counts are always complete. @default 100 */
  readonly limit?: number;
}

/** Options of `client.list(options)`. */
export interface ListOptions {
  /** A glob over object names in Redis `MATCH` syntax, without braces: `order:*`. @default '*' */
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
