import { InvalidArgumentError } from '@org/rlock-core';
import { describeValue } from '@org/rlock-core/engine';

interface Endpoint {
  readonly host: string;
  readonly port: number;
  readonly path: string | undefined;
  readonly db: number;
  readonly tls: boolean;
}

/**
 * Checks one `masters` entry as core's `resolveConnection` will (a
 * `redis://`/`rediss://` URL, ioredis options or an ioredis instance; no Cluster,
 * no `keyPrefix`), without connecting, so every option can be checked before
 * the first connection is made.
 * @throws InvalidArgumentError
 */
function endpointOf(input: unknown): Endpoint {
  if (typeof input === 'string') {
    let url: URL;
    try {
      if (!/^rediss?:\/\//.test(input)) throw new Error('not a redis URL');
      url = new URL(input);
    } catch {
      throw new InvalidArgumentError(`masters[?] must be a redis:// or rediss:// URL, ioredis options or an ioredis instance, got ${describeValue(input)}`);
    }
    const db = Number(url.pathname.replace(/^\//, '') || 0);
    return {
      host: normaliseHost(url.hostname || 'localhost'),
      port: Number(url.port || 6379),
      path: undefined,
      db: Number.isInteger(db) ? db : 0,
      tls: url.protocol === 'rediss:',
    };
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidArgumentError(`masters[?] must be a URL, ioredis options or an ioredis instance, got ${describeValue(input)}`);
  }
  if ((input as { isCluster?: unknown }).isCluster === true) {
    throw new InvalidArgumentError('masters[?]: an ioredis Cluster is not a Redlock master (give each independent master on its own)');
  }
  const instance = input as { options?: Record<string, unknown>; defineCommand?: unknown; duplicate?: unknown };
  const options =
    typeof instance.defineCommand === 'function' && typeof instance.duplicate === 'function' && instance.options
      ? instance.options
      : (input as Record<string, unknown>);
  const keyPrefix = options.keyPrefix;
  if (keyPrefix !== undefined && keyPrefix !== '') {
    throw new InvalidArgumentError("masters[?]: connections with their own keyPrefix are refused; use rlock's keyPrefix option instead");
  }
  return {
    host: normaliseHost(typeof options.host === 'string' ? options.host : 'localhost'),
    port: typeof options.port === 'number' ? options.port : Number(options.port ?? 6379),
    path: typeof options.path === 'string' ? options.path : undefined,
    db: typeof options.db === 'number' ? options.db : 0,
    tls: options.tls !== undefined && options.tls !== false,
  };
}

function normaliseHost(host: string): string {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' ? '127.0.0.1' : bare;
}

/** What makes two masters the same server: host and port (or socket path) and database. */
export function masterIdentity(input: unknown): string {
  const endpoint = endpointOf(input);
  return `${endpoint.path ?? `${endpoint.host}:${endpoint.port}`}/${endpoint.db}`;
}

/** A printable name of a master: its URL without credentials, or host:port. */
export function describeMaster(input: unknown): string {
  const endpoint = endpointOf(input);
  if (typeof input === 'string') {
    const url = new URL(input);
    url.username = '';
    url.password = '';
    return url.toString();
  }
  if (endpoint.path) return `${endpoint.path}${endpoint.db ? `/${endpoint.db}` : ''}`;
  const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
  return `${endpoint.tls ? 'rediss' : 'redis'}://${host}:${endpoint.port}${endpoint.db ? `/${endpoint.db}` : ''}`;
}
