import { Redis, type RedisOptions } from 'ioredis';
import { InvalidArgumentError } from '../errors.js';
import { describeValue } from '../options/argument-checks.js';

/**
 * Settings of the connections rlock creates (options given by the user win):
 * auto pipelining shares round trips among concurrent tasks; a short
 * disconnectTimeout keeps close() from holding the process for ioredis's
 * default 2 s when the server is already gone.
 */
const OWNED_CONNECTION_DEFAULTS = Object.freeze({ enableAutoPipelining: true, disconnectTimeout: 200 });

/** What `redis` may be: a URL, ioredis options, or an ioredis instance. */
export type RedisInput = string | RedisOptions | Redis;

export interface ResolvedConnection {
  readonly redis: Redis;
  /** True when rlock created the connection and so closes it on close(). */
  readonly owned: boolean;
}

/**
 * Connections rlock creates pipeline automatically: concurrent calls from many
 * tasks share round trips. A given instance is used as it is.
 * @throws InvalidArgumentError for a keyPrefix (it would hide rlock's hash tags
 * and the public key layout) or a Cluster (not supported yet).
 */
export function resolveConnection(input: unknown): ResolvedConnection {
  if (typeof input === 'string') {
    if (!/^rediss?:\/\//.test(input)) {
      throw new InvalidArgumentError(`redis must be a redis:// or rediss:// URL, options or an ioredis instance, got ${describeValue(input)}`);
    }
    return { redis: new Redis(input, OWNED_CONNECTION_DEFAULTS), owned: true };
  }
  if (input === null || typeof input !== 'object') {
    throw new InvalidArgumentError(`redis must be a URL, ioredis options or an ioredis instance, got ${describeValue(input)}`);
  }
  if (isCluster(input)) {
    throw new InvalidArgumentError('redis: an ioredis Cluster is not supported by this version of rlock (standalone Redis only)');
  }
  if (isRedisInstance(input)) {
    checkNoKeyPrefix(input.options.keyPrefix);
    return { redis: input, owned: false };
  }
  const options = input as RedisOptions;
  checkNoKeyPrefix(options.keyPrefix);
  return { redis: new Redis({ ...OWNED_CONNECTION_DEFAULTS, ...options }), owned: true };
}

function checkNoKeyPrefix(keyPrefix: unknown): void {
  if (keyPrefix !== undefined && keyPrefix !== '') {
    throw new InvalidArgumentError(
      'redis: connections with their own keyPrefix are refused; use rlock\'s keyPrefix option instead',
    );
  }
}

function isRedisInstance(value: object): value is Redis {
  const candidate = value as Partial<Redis>;
  return typeof candidate.defineCommand === 'function' && typeof candidate.duplicate === 'function' && !!candidate.options;
}

function isCluster(value: object): boolean {
  return (value as { isCluster?: unknown }).isCluster === true;
}
