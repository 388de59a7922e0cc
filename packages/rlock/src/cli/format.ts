import type { ClientIdentity, HolderInfo, ObjectInfo, WaiterInfo } from '@org/rlock-core';
import { KINDS } from '@org/rlock-core/internal';

/** A holder's client for people: `orders-api (web-1 pid 4242)`, or `web-1 pid 4242` under the default name `<host>:<pid>`. */
export function clientLabel(client: ClientIdentity): string {
  const where = `${client.host} pid ${client.pid}`;
  return client.name === `${client.host}:${client.pid}` ? where : `${client.name} (${where})`;
}

/** A duration for people: `850ms`, `9.8s`, `12m05s`; `-1` (no TTL) is `no ttl`, other negatives `-`. */
function formatMs(ms: number): string {
  if (ms === -1) return 'no ttl';
  if (ms < 0 || !Number.isFinite(ms)) return '-';
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.floor((ms % 60_000) / 1_000);
  return minutes < 60 ? `${minutes}m${String(seconds).padStart(2, '0')}s` : `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/**
 * What a terminal may act on or draw out of place, in text read from Redis (names, owners, client names): C0 controls (ESC, CR, LF),
 * DEL, C1 controls (U+009B is a CSI), format characters (bidi overrides such as U+202E, zero-width ones), line and paragraph
 * separators, and lone surrogates.
 */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;
/** The same but a newline: for whole lines of output whose every cell was escaped. */
const UNSAFE_BUT_NEWLINE = /(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;
/** What JSON.stringify leaves raw in a string: DEL, C1, format characters and separators (it escapes C0 and lone surrogates). */
const UNSAFE_IN_JSON = /[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu;

function escapeCode(char: string): string {
  const code = char.codePointAt(0) as number;
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** JSON's escape of each UTF-16 unit (a character past U+FFFF is a surrogate pair). */
function jsonEscape(char: string): string {
  let escaped = '';
  for (let i = 0; i < char.length; i++) escaped += `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return escaped;
}

/** `text` with every character a terminal could act on written as `\xNN` or `\uNNNN`, newlines included: one cell, one line. */
export function escapeText(text: string): string {
  return text.replace(UNSAFE, escapeCode);
}

/** Lines of output (their cells escaped already) made safe for a terminal, keeping their newlines. */
export function escapeLines(text: string): string {
  return text.replace(UNSAFE_BUT_NEWLINE, escapeCode);
}

/** `JSON.stringify(value)` with the characters it leaves raw as `\uNNNN` escapes: the same JSON, parsed to the same strings. */
export function safeJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(UNSAFE_IN_JSON, jsonEscape);
}

/** Rows as columns padded to their widest cell (the last column is not padded); every cell escaped, so a row is one line. */
export function table(rows: readonly (readonly string[])[]): string {
  const escaped = rows.map((row) => row.map(escapeText));
  const widths: number[] = [];
  for (const row of escaped) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return escaped.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')).join('\n');
}

/** One line of `rlock ls`: name, kind, holders, waiters, lease left, and what else the kind has. */
export function listRow(info: ObjectInfo): string[] {
  const waiters = 'waiterCount' in info ? String(info.waiterCount) : '-';
  const ttl = 'ttlMs' in info ? formatMs(info.ttlMs) : '-';
  return [info.name, info.kind, String(info.holderCount), waiters, ttl, detail(info)];
}

/** The header of `rlock ls`. */
export const LIST_HEADER = ['NAME', 'KIND', 'HOLDERS', 'WAITERS', 'TTL', 'DETAIL'];

function detail(info: ObjectInfo): string {
  if (info.kind === 'semaphoreOrLatch') return `value ${info.value} (a semaphore's permits or a latch's count)`;
  if (info.kind === 'unknown') return `a ${info.redisType} rlock did not write`;
  const kind = KINDS.find((registered) => registered.name === info.kind);
  if (!kind) return '-';
  const text = kind.detail(info as never);
  // A detail that names its holder says whose client it is, when known.
  const first = info.holders[0];
  return first && text.includes(first.owner) ? text + byClient(first) : text;
}

/** ` by <client>` when the holder's client is known. */
function byClient(holder: HolderInfo): string {
  return holder.client ? ` by ${clientLabel(holder.client)}` : '';
}

/** What `rlock show` prints for one object (and each frame of `rlock watch`). */
export function describeObject(info: ObjectInfo): string {
  const lines = [
    table([
      ['name', info.name],
      ['key', info.key],
      ['kind', info.kind],
      ...('mode' in info ? [['mode', info.mode ?? '-']] : []),
      ...('ttlMs' in info ? [['ttl', formatMs(info.ttlMs)]] : []),
      ...('permits' in info ? [['permits', String(info.permits)]] : []),
      ...('count' in info ? [['count', String(info.count)]] : []),
      ...('value' in info ? [['value', String(info.value)]] : []),
      ...('redisType' in info ? [['type', info.redisType]] : []),
      ['holders', more(info.holders.length, info.holderCount)],
    ]),
  ];
  if (info.holders.length > 0) lines.push(indent(holderTable(info.holders, info.serverTimeMs)));
  if ('waiters' in info) {
    lines.push(table([['waiters', more(info.waiters.length, info.waiterCount)]]));
    if (info.waiters.length > 0) lines.push(indent(waiterTable(info.waiters)));
  }
  return lines.join('\n');
}

function more(listed: number, total: number): string {
  return listed < total ? `${total} (first ${listed} listed)` : String(total);
}

function holderTable(holders: readonly HolderInfo[], now: number): string {
  const withMode = holders.some((holder) => holder.mode !== undefined);
  const withId = holders.some((holder) => holder.id !== undefined);
  const withClient = holders.some((holder) => holder.client !== undefined);
  const header = ['OWNER', ...(withMode ? ['MODE'] : []), ...(withId ? ['PERMIT'] : []), 'COUNT', 'TOKEN', 'TTL', 'HELD', ...(withClient ? ['CLIENT'] : [])];
  const rows = holders.map((holder) => [
    holder.owner,
    ...(withMode ? [holder.mode ?? '-'] : []),
    ...(withId ? [holder.id ?? '-'] : []),
    String(holder.count),
    holder.token ?? '-',
    formatMs(holder.ttlMs),
    holder.acquiredAtMs === undefined ? '-' : formatMs(now - holder.acquiredAtMs),
    ...(withClient ? [holder.client ? clientLabel(holder.client) : '-'] : []),
  ]);
  return table([header, ...rows]);
}

function waiterTable(waiters: readonly WaiterInfo[]): string {
  return table([['OWNER', 'WAITER LEASE'], ...waiters.map((waiter) => [waiter.owner, formatMs(waiter.ttlMs)])]);
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
