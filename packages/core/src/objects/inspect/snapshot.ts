import type { Transport } from '../../connection/transport.js';
import { objectKey } from '../names.js';
import { SCRIPTS } from '../scripts.generated.js';
import type { HolderInfo, ObjectInfoBase, WaiterInfo } from './info.js';

/** The reply of read-7.lua, as ioredis hands it over (strings, integers, nulls). */
type ReadReply = [
  now: number,
  types: string[],
  mainPttl: number,
  main: (string | null)[],
  queue: (string | number)[],
  readers: (string | number | null)[],
  writers: (string | number)[],
  permits: (string | number | null)[],
];

/**
 * One object's keys as read-7.lua saw them in one step: what each kind's
 * `inspect` part reads to recognise and describe itself. The lists are the
 * script's (see its header), each bounded by the call's limit.
 */
export interface LayoutSnapshot {
  /** The server's clock, Unix ms. */
  readonly now: number;
  /** TYPE of the main key and of each suffix key read ('none' when absent). */
  readonly types: Readonly<Record<'main' | 'queue' | 'waiters' | 'readers' | 'writers' | 'leases' | 'holders', string>>;
  /** PTTL of the main key: ms left, -1 without TTL, -2 absent. */
  readonly mainPttl: number;
  /** The main hash's fields (null when missing; all null when the main key is no hash). */
  readonly fields: Readonly<Record<'owner' | 'count' | 'token' | 'mode' | 'w' | 'wc' | 'wt' | 'kind', string | null>>;
  /** The main string's value, when the main key is a string. */
  readonly value: string | null;
  /** {live, owner, leaseEnd, …}: a fair lock's live queued waiters, in arrival order. */
  readonly queue: readonly (string | number)[];
  /** {live, owner, leaseEnd, count, token, …}: a read-write lock's live readers. */
  readonly readers: readonly (string | number | null)[];
  /** {live, owner, leaseEnd, …}: a read-write lock's live waiting writers. */
  readonly writers: readonly (string | number)[];
  /** {live, lapsed, id, leaseEnd, token, …}: leased permits. */
  readonly permits: readonly (string | number | null)[];
}

const FIELDS = ['owner', 'count', 'token', 'mode', 'w', 'wc', 'wt', 'kind'] as const;

/** Reads object `name` in one script call: a consistent snapshot of every key its kind may keep. */
export async function readSnapshot(transport: Transport, prefix: string, name: string, limit: number): Promise<{ key: string; snapshot: LayoutSnapshot }> {
  const key = objectKey(prefix, name);
  const keys = [key, `${key}:queue`, `${key}:waiters`, `${key}:readers`, `${key}:writers`, `${key}:leases`, `${key}:holders`];
  const reply = await transport.script(SCRIPTS.inspectRead, [...keys, limit], 'inspect', key, (value) => value as ReadReply);
  const [now, types, mainPttl, main, queue, readers, writers, permits] = reply;
  const [mainType = 'none', queueType = 'none', waiters = 'none', readersType = 'none', writersType = 'none', leases = 'none', holders = 'none'] = types;
  const isHash = mainType === 'hash';
  const fields = Object.fromEntries(FIELDS.map((field, i) => [field, isHash ? (main[i] ?? null) : null])) as LayoutSnapshot['fields'];
  return {
    key,
    snapshot: {
      now,
      types: { main: mainType, queue: queueType, waiters, readers: readersType, writers: writersType, leases, holders },
      mainPttl,
      fields,
      value: mainType === 'string' ? (main[0] ?? null) : null,
      queue,
      readers,
      writers,
      permits,
    },
  };
}

/** What every report has but holders: name, key, server time. */
export type ReportBase = Omit<ObjectInfoBase, 'holders' | 'holderCount'>;

/** The main key holds a decimal integer: a semaphore's permits or a latch's count. */
export function integerValue(snapshot: LayoutSnapshot): number | undefined {
  const value = Number(snapshot.value ?? NaN);
  return snapshot.value !== null && Number.isSafeInteger(value) ? value : undefined;
}

/** How a kind that keeps a bare integer recognises it: one of several (a semaphore's permits, a latch's count, a pool). */
export const fitsBareInteger = (snapshot: LayoutSnapshot): 'fits' | undefined => (integerValue(snapshot) === undefined ? undefined : 'fits');

export function holder(
  owner: string,
  count: string | number | null | undefined,
  token: string | number | null | undefined,
  ttlMs: number,
  now: number,
  extra: { mode?: 'read' | 'write'; id?: string } = {},
): HolderInfo {
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

/** {live, owner, leaseEnd, …} of the script: queued waiters or waiting writers. */
export function waiterList(entries: readonly (string | number | null)[], now: number): WaiterInfo[] {
  const waiters: WaiterInfo[] = [];
  for (let i = 1; i + 1 < entries.length; i += 2) waiters.push({ owner: String(entries[i]), ttlMs: Number(entries[i + 1]) - now });
  return waiters;
}
