import type { Transport } from '../../connection/transport.js';
import { SCRIPTS } from '../scripts.generated.js';
import type { HolderInfo, ObjectInfoBase, WaiterInfo } from './info.js';

export type KeyType = 'string' | 'hash' | 'list' | 'zset';

/** A key that objects of a kind keep: its name (built by the kind's keys.ts) and its type. */
export interface KeptKey {
  readonly key: string;
  readonly type: KeyType;
  /** Another kept key, a list or sorted set read whole: only its members are read here, so the read stays bounded by the limit. */
  readonly by?: string;
}

/** One key as read.lua read it: what its type holds, the others empty. */
export interface KeyRead {
  /** TYPE: 'none' when absent. */
  readonly type: string;
  /** PTTL: ms left, -1 without TTL, -2 absent. */
  readonly pttl: number;
  readonly value: string | null;
  /** A hash's fields: all of them, or those `by` names. */
  readonly fields: Readonly<Record<string, string | undefined>>;
  /** A list's first `limit` items. */
  readonly items: readonly string[];
  /** A sorted set's entries whose lease has not ended, and those whose lease has. */
  readonly live: number;
  readonly lapsed: number;
  /** At most `limit` live entries, each a member and its score (a lease end, server ms): soonest first, or those of the members of `by`, in its order. */
  readonly entries: readonly { readonly member: string; readonly score: number }[];
}

/** One object's keys as a kind names them (`Part`), read in one step: what the kind recognises and describes itself from. */
export interface LayoutSnapshot<Part extends string = string> {
  /** The server's clock, Unix ms. */
  readonly now: number;
  readonly keys: Readonly<Record<Part, KeyRead>>;
}

/** Reads `keys` in one script call, one consistent snapshot; all share the hash tag of `key`, the object's main key. */
export async function readKeys(transport: Transport, key: string, keys: readonly KeptKey[], limit: number): Promise<{ now: number; reads: KeyRead[] }> {
  // Keys read `by` another last: that one is read before them.
  const ordered = [...keys.filter((kept) => kept.by === undefined), ...keys.filter((kept) => kept.by !== undefined)];
  const items = ordered.map(({ key, by }) => ({ key, by: by === undefined ? '' : ordered.findIndex((kept) => kept.key === by && kept.by === undefined) + 1 }));
  const [now, ...raw] = await transport.run(SCRIPTS.inspectRead, { limit, items }, 'inspect', key, (reply) => reply as [number, ...RawRead[]]);
  const reads = new Map(ordered.map((kept, i) => [kept, parseRead(raw[i] ?? ['none', -2])]));
  return { now, reads: keys.map((kept) => reads.get(kept) as KeyRead) };
}

type RawRead = [type: string, pttl: number, ...rest: (string | number | null)[]];

function parseRead([type, pttl, ...rest]: RawRead): KeyRead {
  const pairs = (from: number): [string, string][] => {
    const out: [string, string][] = [];
    for (let i = from; i + 1 < rest.length; i += 2) out.push([String(rest[i]), String(rest[i + 1])]);
    return out;
  };
  const zset = type === 'zset';
  return {
    type,
    pttl,
    value: type === 'string' ? String(rest[0]) : null,
    fields: type === 'hash' ? Object.fromEntries(pairs(0)) : {},
    items: type === 'list' ? rest.map(String) : [],
    live: zset ? Number(rest[0]) : 0,
    lapsed: zset ? Number(rest[1]) : 0,
    entries: zset ? pairs(2).map(([member, score]) => ({ member, score: Number(score) })) : [],
  };
}

export type ReportBase = Omit<ObjectInfoBase, 'holders' | 'holderCount'>;

/** The key holds a decimal integer: a semaphore's permits, a latch's count. */
export function integerValue(read: KeyRead): number | undefined {
  const value = Number(read.value ?? NaN);
  return read.value !== null && Number.isSafeInteger(value) ? value : undefined;
}

/**
 * How kind `kind`, which keeps a bare integer at `read` and its name at `marker` (`<prefix>:{<name>}:kind`), recognises it: shown by the
 * marker; not it when the marker names another kind; one of several (a semaphore's permits, a latch's count, a pool) with no marker.
 */
export function markedBareInteger(read: KeyRead, marker: KeyRead, kind: string): 'shown' | 'fits' | undefined {
  if (integerValue(read) === undefined) return undefined;
  if (marker.type === 'none') return 'fits';
  return marker.value === kind ? 'shown' : undefined;
}

/** A hash field or score as a read found it (null or undefined: absent). */
type FieldRead = string | number | null | undefined;

export function holder(owner: string, count: FieldRead, token: FieldRead, ttlMs: number, now: number, extra: Pick<HolderInfo, 'mode' | 'id'> = {}): HolderInfo {
  const tokenText = token === null || token === undefined ? undefined : String(token);
  // A fair lock's hold handed over and not yet counted by its owner's script reads count 0: it is one.
  return { owner, count: Math.max(1, Number(count ?? 0)), token: tokenText, ttlMs, acquiredAtMs: acquiredAt(tokenText, now), ...extra };
}

/** The token read as server time (µs), when it is one: not after now. */
function acquiredAt(token: string | undefined, now: number): number | undefined {
  if (token === undefined || !/^\d{1,16}$/.test(token)) return undefined;
  const ms = Math.floor(Number(token) / 1000);
  return ms <= now ? ms : undefined;
}

/** The detail column of `rlock ls` for a lock: its holder and count. */
export const holderDetail = (info: ObjectInfoBase): string => (info.holders[0] ? `owner ${info.holders[0].owner} count ${info.holders[0].count}` : 'free');

/** The live entries of a sorted set of waiters (owner → waiter lease end), as waiters. */
export function waiterList(read: KeyRead, now: number): WaiterInfo[] {
  return read.entries.map(({ member, score }) => ({ owner: member, ttlMs: score - now }));
}
