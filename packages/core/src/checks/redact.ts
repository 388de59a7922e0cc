import { inspect } from 'node:util';

/** What a redacted secret reads as. */
export const REDACTED = '***';

/**
 * The password of every URL in `text` (`scheme://user:password@host`), up to the last `@` before the host as `new URL` reads it, and
 * through `\"` escapes of a JSON-quoted URL.
 */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:@/?#"]*):(?:\\.|[^\s/?#"\\])*@/gi;

/** `text` with the password of every URL in it replaced by `***`; the user name stays, as it names the ACL user. */
export function redactUrls(text: string): string {
  return text.replace(URL_PASSWORD, (_match, scheme: string, user: string) => `${scheme}${user}:${REDACTED}@`);
}

/** Option names whose values are secrets in ioredis's options (and Node's TLS options, which ioredis passes on). */
const SECRET_OPTION = /^(password|sentinelPassword|passphrase|key|pfx)$/i;

/** Deep enough for a Cluster's `redisOptions.tls`; deeper values print as their type. */
const MAX_VIEW_DEPTH = 4;

/**
 * A copy of `value` that is safe to print: URLs without passwords, secret options (`password`, TLS `key`, …) as `***`, and an ioredis
 * instance as its class and address. For `util.inspect` and `toJSON`; never for connecting.
 */
export function redactedView(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return redactUrls(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[Circular]';
  if (isConnection(value)) return `[${value.isCluster === true ? 'Cluster' : 'Redis'} ${connectionAddress(value)}]`;
  if (depth >= MAX_VIEW_DEPTH) return Array.isArray(value) ? '[Array]' : `[${value.constructor?.name ?? 'Object'}]`;
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => redactedView(item, depth + 1, seen));
    if (!isPlainObject(value)) return `[${value.constructor?.name ?? 'Object'}]`;
    const view: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      view[key] = SECRET_OPTION.test(key) && item !== undefined && item !== null && item !== '' ? REDACTED : redactedView(item, depth + 1, seen);
    }
    return view;
  } finally {
    seen.delete(value);
  }
}

/**
 * Makes `options` print redacted: `util.inspect` (console.log) and `JSON.stringify` show {@link redactedView}, while the fields keep
 * the values given (the connection needs them). Both are non-enumerable, so spreading or iterating the object is unchanged.
 */
export function printRedacted<T extends object>(options: T): T {
  Object.defineProperty(options, inspect.custom, { value: (_depth: number, inspectOptions: object) => inspect(redactedView(options), inspectOptions) });
  Object.defineProperty(options, 'toJSON', { value: () => redactedView(options) });
  return options;
}

function isPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

interface ConnectionLike {
  readonly options?: Record<string, unknown>;
  readonly startupNodes?: readonly unknown[];
  readonly isCluster?: boolean;
}

/** An ioredis Redis or Cluster (checked by shape: any copy of ioredis). */
export function isConnection(value: object): value is ConnectionLike {
  const candidate = value as { duplicate?: unknown; defineCommand?: unknown; options?: unknown };
  return typeof candidate.defineCommand === 'function' && typeof candidate.duplicate === 'function' && typeof candidate.options === 'object';
}

/** `redis://user:***@host:port/db` (a socket path as it is; a Sentinel group by master name; a Cluster by its startup nodes). */
function connectionAddress(connection: ConnectionLike): string {
  if (connection.isCluster === true) {
    return (connection.startupNodes ?? []).map((node) => (typeof node === 'string' ? redactUrls(node) : addressOf(node as Record<string, unknown>))).join(',');
  }
  const options = connection.options ?? {};
  if (Array.isArray(options.sentinels) && typeof options.name === 'string') return `sentinel master ${JSON.stringify(options.name)}`;
  return addressOf(options);
}

function addressOf(options: Record<string, unknown>): string {
  const db = typeof options.db === 'number' && options.db !== 0 ? `/${options.db}` : '';
  if (typeof options.path === 'string') return `${options.path}${db}`;
  const scheme = options.tls !== undefined && options.tls !== false && options.tls !== null ? 'rediss' : 'redis';
  const user = typeof options.username === 'string' ? options.username : '';
  const auth = options.password !== undefined && options.password !== null && options.password !== '' ? `${user}:${REDACTED}@` : user ? `${user}@` : '';
  const host = typeof options.host === 'string' ? options.host : 'localhost';
  const port = typeof options.port === 'number' || typeof options.port === 'string' ? options.port : 6379;
  return `${scheme}://${auth}${host.includes(':') ? `[${host}]` : host}:${port}${db}`;
}
