import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RLockClient } from '@org/rlock-core';
import { createClient } from '../create-client.js';
import { UsageError } from './exit-codes.js';

/** The connection flags every command takes. */
export interface ConnectionFlags {
  /** `--redis <url>`: one Redis. */
  readonly redis?: string;
  /** `--cluster <url,url,…>`: a Cluster's startup nodes. */
  readonly cluster?: string;
  /** `--sentinels <host:port,…>`: a Sentinel group (with `--name`). */
  readonly sentinels?: string;
  /** `--name <master>`: the Sentinel master name. */
  readonly name?: string;
  /** `--prefix <prefix>`: the key prefix of the objects. */
  readonly prefix: string;
  /** `--timeout <ms>`: rlock's limit on every Redis call. */
  readonly timeout: number;
}

/** A client for one CLI run, on a connection the CLI made (and closes). */
export interface CliConnection {
  readonly client: RLockClient;
  close(): Promise<void>;
}

/** Where the CLI connects without `--redis`, `--cluster` or `--sentinels`. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * The connection the flags ask for, and a client on it. A CLI run does not
 * wait for a server that is down: the connection gives up after a few tries,
 * so the command fails with RedisUnavailableError (exit code 3).
 * @throws UsageError for flags that do not go together or a bad address.
 */
export function connect(flags: ConnectionFlags): CliConnection {
  const chosen = [flags.redis, flags.cluster, flags.sentinels].filter((flag) => flag !== undefined);
  if (chosen.length > 1) throw new UsageError('give one of --redis, --cluster and --sentinels');
  if (flags.sentinels !== undefined && flags.name === undefined) throw new UsageError('--sentinels needs --name <master name>');
  if (flags.name !== undefined && flags.sentinels === undefined) throw new UsageError('--name goes with --sentinels');
  const giveUp = (times: number): number | null => (times > 2 ? null : 100);
  const common: RedisOptions = { connectTimeout: flags.timeout, maxRetriesPerRequest: 1, retryStrategy: giveUp };
  let redis: Redis | Cluster;
  if (flags.cluster !== undefined) {
    const options: ClusterOptions = { redisOptions: common, clusterRetryStrategy: giveUp };
    redis = new Cluster(splitList(flags.cluster, '--cluster').map((node) => parseNodeUrl(node)), options);
  } else if (flags.sentinels !== undefined) {
    const sentinels = splitList(flags.sentinels, '--sentinels').map((entry) => parseHostPort(entry));
    redis = new Redis({ ...common, sentinels, name: flags.name, sentinelRetryStrategy: giveUp });
  } else {
    const url = flags.redis ?? process.env.RLOCK_REDIS_URL ?? DEFAULT_REDIS_URL;
    if (!/^rediss?:\/\//.test(url)) throw new UsageError(`--redis must be a redis:// or rediss:// URL, got ${JSON.stringify(url)}`);
    redis = new Redis(url, common);
  }
  // Failures reach the commands as typed errors; ioredis must not print them too.
  redis.on('error', () => undefined);
  let client: RLockClient;
  try {
    client = createClient({
      redis: redis as Redis,
      keyPrefix: flags.prefix,
      commandTimeoutMs: flags.timeout,
      // The CLI takes no lease; the watchdog lease only has to allow the timeout.
      watchdogTimeoutMs: Math.max(30_000, flags.timeout * 3),
    });
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  client.on('error', () => undefined);
  return {
    client,
    async close() {
      await client.close().catch(() => undefined);
      redis.disconnect();
    },
  };
}

function splitList(value: string, flag: string): string[] {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
  if (items.length === 0) throw new UsageError(`${flag} needs at least one address`);
  return items;
}

function parseNodeUrl(node: string): { host: string; port: number } {
  if (!/^rediss?:\/\//.test(node)) return parseHostPort(node);
  const url = new URL(node);
  return { host: url.hostname, port: Number(url.port || 6379) };
}

function parseHostPort(entry: string): { host: string; port: number } {
  const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(entry);
  const port = Number(match?.[2]);
  if (!match || port < 1 || port > 65_535) throw new UsageError(`expected host:port, got ${JSON.stringify(entry)}`);
  return { host: match[1] as string, port };
}
