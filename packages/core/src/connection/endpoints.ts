import { Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { InvalidArgumentError } from '../errors.js';
import { describeValue } from '../checks/argument-checks.js';
import { isConnection } from '../checks/redact.js';

/**
 * Settings of connections rlock creates (the user's win): a short disconnectTimeout for close(); no resend of an in-flight command, which
 * may arrive after its op marker expired and count twice; reconnects at most ~1 s apart, as releases, renewals and wakes wait on them.
 */
const OWNED_CONNECTION_DEFAULTS = Object.freeze({
  disconnectTimeout: 200,
  autoResendUnfulfilledCommands: false,
  retryStrategy: (times: number): number => Math.min(50 * 2 ** (times - 1), 1_000) + Math.floor(Math.random() * 100),
});

/**
 * A Cluster's options (the user's win) with those settings for its node connections (`redisOptions`), the same reconnect pacing, and no
 * retry of a command whose node connection closed (`retryDelayOnFailover: 0`): it may have run, and ioredis would send it again, after a
 * failover too, when its op marker may be gone. MOVED, ASK, TRYAGAIN and CLUSTERDOWN come before a command runs, and are still followed.
 */
export function ownedClusterOptions(options: ClusterOptions, connectionName?: string): ClusterOptions {
  // A node's own retryStrategy is ioredis's (none: a lost node is found again through the slots); the Cluster's reconnects are paced.
  const { retryStrategy, ...nodeDefaults } = OWNED_CONNECTION_DEFAULTS;
  const named = connectionName === undefined ? nodeDefaults : { ...nodeDefaults, connectionName };
  return { retryDelayOnFailover: 0, clusterRetryStrategy: retryStrategy, ...options, redisOptions: { ...named, ...options.redisOptions } };
}

/** What `redis` may be: a URL or `host:port`, ioredis options, or an ioredis instance. */
export type RedisInput = string | RedisOptions | Redis;

/** Which server a connection input designates, checked without connecting. */
export interface ConnectionEndpoint {
  /** What makes two inputs the same server: host and port (or socket path) and database. */
  readonly identity: string;
  /** A printable name: the URL without credentials, or redis://host:port. */
  readonly name: string;
}

/**
 * Checks a non-empty list of distinct servers (Redlock's masters) as {@link connectionEndpoint} does, returning each with its printable name.
 * @throws InvalidArgumentError listing every problem (`what` and `one` name the option and an item)
 */
export function distinctEndpoints(value: unknown, what: string, one: string): { input: RedisInput; name: string }[] {
  if (!Array.isArray(value))
    throw new InvalidArgumentError(`${what} must be an array of URLs, ioredis options or ioredis instances, got ${describeValue(value)}`);
  if (value.length === 0) throw new InvalidArgumentError(`${what} must list at least one ${one}`);
  const problems: string[] = [];
  // By identity, and by the input itself (one instance given twice).
  const seen = new Map<unknown, number>();
  const result: { input: RedisInput; name: string }[] = [];
  value.forEach((input: unknown, index) => {
    try {
      const { identity, name } = connectionEndpoint(input, `${what}[${index}]`);
      const earlier = seen.get(identity) ?? seen.get(input);
      if (earlier !== undefined)
        throw new InvalidArgumentError(`${what}[${index}] (${name}) is the same server as ${what}[${earlier}]: ${what} must be distinct`);
      seen.set(identity, index).set(input, index);
      result.push({ input: input as RedisInput, name });
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
    }
  });
  if (problems.length > 0) throw new InvalidArgumentError(problems.join('; '));
  return result;
}

/** Checks a connection input as {@link resolveConnection} will, without connecting, and says which server it is. @throws InvalidArgumentError */
export function connectionEndpoint(input: unknown, what = 'redis'): ConnectionEndpoint {
  if (typeof input === 'string') return urlEndpoint(input, what);
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidArgumentError(`${what} must be a URL, ioredis options or an ioredis instance, got ${describeValue(input)}`);
  }
  if ((input as { isCluster?: unknown }).isCluster === true) {
    throw new InvalidArgumentError(`${what}: an ioredis Cluster is not supported here (a standalone Redis or a Sentinel-managed master)`);
  }
  const options = (isConnection(input) ? input.options : input) as Record<string, unknown>;
  checkNoKeyPrefix(options.keyPrefix, what);
  const host = normaliseHost(typeof options.host === 'string' ? options.host : 'localhost');
  const port = typeof options.port === 'number' ? options.port : Number(options.port ?? 6379);
  const db = typeof options.db === 'number' ? options.db : 0;
  const dbSuffix = db ? `/${db}` : '';
  if (typeof options.path === 'string') return { identity: `${options.path}/${db}`, name: `${options.path}${dbSuffix}` };
  const scheme = options.tls !== undefined && options.tls !== false ? 'rediss' : 'redis';
  return { identity: `${host}:${port}/${db}`, name: `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}${dbSuffix}` };
}

/**
 * The URL a string input designates: a `redis://` or `rediss://` URL as it is, or `host:port` (`[::1]:6379` for IPv6) as
 * `redis://host:port`, as the CLI takes them; undefined for anything else (a bare host would leave the port to a guess).
 */
export function redisUrlOf(input: string): string | undefined {
  if (/^rediss?:\/\//i.test(input)) return input;
  const match = /^(?:\[([^\]]+)\]|([^:/@[\]\s]+)):(\d{1,5})$/.exec(input);
  const port = Number(match?.[3]);
  return match && port >= 1 && port <= 65_535 ? `redis://${input}` : undefined;
}

function urlEndpoint(input: string, what: string): ConnectionEndpoint {
  let url: URL;
  try {
    const href = redisUrlOf(input);
    if (href === undefined) throw new Error('not a redis URL');
    url = new URL(href);
  } catch {
    // A bare host is the likeliest slip: say what it lacks.
    const hint = /^[\w.-]+$/.test(input) ? ` (a host needs its port, e.g. "${input}:6379")` : '';
    throw new InvalidArgumentError(
      `${what} must be a redis:// or rediss:// URL, host:port, ioredis options or an ioredis instance, got ${describeValue(input)}${hint}`,
    );
  }
  const db = Number(url.pathname.replace(/^\//, '') || 0);
  const identity = `${normaliseHost(url.hostname || 'localhost')}:${Number(url.port || 6379)}/${Number.isInteger(db) ? db : 0}`;
  url.username = '';
  url.password = '';
  return { identity, name: url.toString() };
}

function normaliseHost(host: string): string {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' ? '127.0.0.1' : bare;
}

/**
 * The connection for `input`: created from a URL or options (named `connectionName` unless they name it), or a given instance as it is;
 * `owned` when rlock created it, and so closes it on close().
 * @throws InvalidArgumentError as {@link connectionEndpoint}: a keyPrefix would hide rlock's hash tags and the public key layout.
 */
export function resolveConnection(input: unknown, what = 'redis', connectionName?: string): { readonly redis: Redis; readonly owned: boolean } {
  connectionEndpoint(input, what);
  const defaults = connectionName === undefined ? OWNED_CONNECTION_DEFAULTS : { ...OWNED_CONNECTION_DEFAULTS, connectionName };
  if (typeof input === 'string') return { redis: new Redis(redisUrlOf(input) as string, defaults), owned: true };
  if (isConnection(input as object)) return { redis: input as Redis, owned: false };
  return { redis: new Redis({ ...defaults, ...(input as RedisOptions) }), owned: true };
}

/** @throws InvalidArgumentError for a connection with a keyPrefix of its own: it would hide rlock's hash tags and the public key layout. */
export function checkNoKeyPrefix(keyPrefix: unknown, what: string): void {
  if (keyPrefix !== undefined && keyPrefix !== '') {
    throw new InvalidArgumentError(`${what}: connections with their own keyPrefix are refused; use rlock's keyPrefix option instead`);
  }
}
