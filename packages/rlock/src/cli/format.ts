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

/** Rows as columns padded to their widest cell (the last column is not padded). */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')).join('\n');
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
