/** What `client.inspect(name)` and `client.list()` report, read from the public layout in one script call. */

import type { SemaphoreOrLatchInfo, UnknownObjectInfo } from '../objects/inspect/info.js';
import { KINDS, type KindInfo, type KindName } from '../objects/kinds.js';

export type { ObjectInfoBase, HolderInfo, WaiterInfo, SemaphoreOrLatchInfo, UnknownObjectInfo } from '../objects/inspect/info.js';

/** The kinds of coordination object the data layout tells apart: the names in {@link OBJECT_KINDS}. */
export type ObjectKind = KindName;

/**
 * One object's state, told apart by `kind`: the report of a registered kind
 * (one `…Info` type per kind: {@link @org/rlock-core!LockInfo | LockInfo}, {@link @org/rlock-core!SemaphoreInfo | SemaphoreInfo} and the
 * others), a bare integer whose kind the layout leaves open
 * ({@link SemaphoreOrLatchInfo}), or another program's key
 * ({@link UnknownObjectInfo}).
 */
export type ObjectInfo = KindInfo | SemaphoreOrLatchInfo | UnknownObjectInfo;

/** Options of `client.inspect(name, options)`. */
export interface InspectOptions {
  /**
   * The kind you expect, where the layout cannot tell (a bare integer; a fair
   * lock with nobody queued). A layout that shows another kind wins.
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
