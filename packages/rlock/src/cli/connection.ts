import { readFileSync } from 'node:fs';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RLockClient } from '@org/rlock-core';
import { redactUrls } from '@org/rlock-core/internal';
import { createClient } from '../create-client.js';
import { UsageError } from './exit-codes.js';

/** The connection flags every command takes. */
export interface ConnectionFlags {
  /** `--redis <url | host:port>`: one Redis (shown by `ps` to every user of the machine: no password here). */
  readonly redis?: string;
  /** `--redis-file <path>`: one Redis, its URL read from a file (a password stays out of `ps`). */
  readonly redisFile?: string;
  /** `--tls-ca <path>`: the PEM file of the CA that signed the server's certificate; connects with TLS. */
  readonly tlsCa?: string;
  /** `--cluster <url | host:port,…>`: a Cluster's startup nodes. */
  readonly cluster?: string;
  /** `--sentinels <url | host:port,…>`: a Sentinel group (with `--name`). */
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
  /** The server asked, for messages (`127.0.0.1:6379`, `Cluster …`, `Sentinel master …`; says so when it is the default). */
  readonly server: string;
  /** The last connection failure since it was ready (address and socket code); undefined while connected. */
  connectionFailure(): string | undefined;
  close(): Promise<void>;
}

/** Where the CLI connects without `--redis`, `--cluster` or `--sentinels`. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** The environment variable with the URL of the Redis the CLI connects to without an address flag. */
export const REDIS_URL_VARIABLE = 'RLOCK_REDIS_URL';

/**
 * The connection the flags ask for, and a client on it. A CLI run does not
 * wait for a server that is down: the connection gives up after a few tries,
 * so the command fails with RedisUnavailableError (exit code 3).
 * Every address flag takes a `redis://` (or `rediss://`) URL or `host:port`;
 * `warn` is told once when a password came on the command line.
 * @throws UsageError for flags that do not go together, a bad address or a file that cannot be read.
 */
export function connect(flags: ConnectionFlags, warn: (text: string) => void = () => undefined): CliConnection {
  const chosen = [flags.redis, flags.redisFile, flags.cluster, flags.sentinels].filter((flag) => flag !== undefined);
  if (chosen.length > 1) throw new UsageError('give one of --redis, --redis-file, --cluster and --sentinels');
  if (flags.sentinels !== undefined && flags.name === undefined) throw new UsageError('--sentinels needs --name <master name>');
  if (flags.name !== undefined && flags.sentinels === undefined) throw new UsageError('--name goes with --sentinels');
  if (flags.sentinels !== undefined && flags.tlsCa !== undefined) throw new UsageError('--tls-ca goes with --redis, --redis-file or --cluster');
  const onArgv = (['redis', 'cluster', 'sentinels'] as const).find((flag) => hasPassword(flags[flag]));
  if (onArgv !== undefined) {
    warn(
      `warning: --${onArgv} carries a password, which every user of this machine can read (ps, /proc); ` +
        `give the URL in ${REDIS_URL_VARIABLE} or in a file with --redis-file instead`,
    );
  }
  const ca = flags.tlsCa === undefined ? undefined : readSmallFile(flags.tlsCa, '--tls-ca');
  const giveUp = (times: number): number | null => (times > 2 ? null : 100);
  const common: RedisOptions = {
    connectTimeout: flags.timeout,
    maxRetriesPerRequest: 1,
    retryStrategy: giveUp,
    // ioredis waits this long for a socket that never connected to close
    // (2 s by default), which held a run against a refused port open for it.
    disconnectTimeout: 100,
    // A command written to a connection that then closed may have run: `unlock` and `release` are not sent twice.
    autoResendUnfulfilledCommands: false,
  };
  let redis: Redis | Cluster;
  let server: string;
  if (flags.cluster !== undefined) {
    const nodes = splitList(flags.cluster, '--cluster').map((node) => parseAddress(node, '--cluster', ca !== undefined));
    // The nodes the Cluster finds share the startup nodes' credentials and TLS: ioredis takes both from redisOptions.
    const auth = nodes.find((node) => node.credentials !== undefined)?.credentials;
    const tls = ca !== undefined ? { ca } : nodes.some((node) => node.tls) ? {} : undefined;
    // retryDelayOnFailover 0: ioredis would resend a command whose node connection closed (it may have run).
    const options: ClusterOptions = {
      redisOptions: { ...common, ...auth, ...(tls ? { tls } : {}) },
      clusterRetryStrategy: giveUp,
      retryDelayOnFailover: 0,
    };
    redis = new Cluster(
      nodes.map(({ host, port }) => ({ host, port })),
      options,
    );
    server = `Cluster ${nodes.map((node) => node.address).join(',')}`;
  } else if (flags.sentinels !== undefined) {
    const sentinels = splitList(flags.sentinels, '--sentinels').map((entry) => parseAddress(entry, '--sentinels'));
    redis = new Redis({ ...common, sentinels: sentinels.map(({ host, port }) => ({ host, port })), name: flags.name, sentinelRetryStrategy: giveUp });
    server = `Sentinel master ${JSON.stringify(flags.name)} (Sentinels ${sentinels.map((sentinel) => sentinel.address).join(',')})`;
  } else {
    const fromEnv = process.env[REDIS_URL_VARIABLE];
    const [given, from] =
      flags.redis !== undefined
        ? [flags.redis, '--redis']
        : flags.redisFile !== undefined
          ? [readUrlFile(flags.redisFile), '--redis-file']
          : fromEnv !== undefined && fromEnv !== ''
            ? [fromEnv, REDIS_URL_VARIABLE]
            : [undefined, 'the default'];
    const target =
      flags.redisFile !== undefined && given !== undefined
        ? parseFileAddress(given, flags.redisFile, ca !== undefined)
        : parseAddress(given ?? DEFAULT_REDIS_URL, from, ca !== undefined);
    redis = new Redis(target.url, ca === undefined ? common : { ...common, tls: { ca } });
    server = given === undefined ? `${target.address} (the default: choose a server with ${REDIS_URL_VARIABLE}, --redis-file or --redis)` : target.address;
  }
  // Failures reach the commands as typed errors; ioredis must not print them
  // too. The socket's own error is kept: the command only sees ioredis's
  // summary ("Reached the max retries per request limit"), which names
  // neither the address nor the code.
  let failure: { text: string; coded: boolean } | undefined;
  const failed = (error: Error & { code?: unknown }, address?: string): void => {
    const coded = typeof error.code === 'string';
    // ioredis's own words for a connection it gave up on ("Connection is
    // closed.", a Cluster's "Failed to refresh slots cache") come after the
    // socket's error or a node's, and must not hide its code or address.
    if (failure !== undefined && !coded && (failure.coded || address === undefined)) return;
    failure = { text: `${address === undefined ? '' : `${address}: `}${describeSocketError(error)}`, coded };
  };
  redis.on('error', (error: Error & { lastNodeError?: unknown }) => {
    if (redis.status === 'ready') return;
    failed(error.lastNodeError instanceof Error ? error.lastNodeError : error);
  });
  // A Cluster's nodes: each one's own failure, with the node's address.
  redis.on('node error', (error: Error, address: string) => failed(error, address));
  redis.on('ready', () => {
    failure = undefined;
  });
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
    server,
    connectionFailure: () => failure?.text,
    async close() {
      await client.close().catch(() => undefined);
      redis.disconnect();
    },
  };
}

/** A socket error as Node words it (`connect ECONNREFUSED 127.0.0.1:6379`), with its code when the words lack it. */
function describeSocketError(error: Error & { code?: unknown }): string {
  const code = typeof error.code === 'string' ? error.code : undefined;
  return code === undefined || error.message.includes(code) ? error.message : `${error.message} (${code})`;
}

function splitList(value: string, flag: string): string[] {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
  if (items.length === 0) throw new UsageError(`${flag} needs at least one address`);
  return items;
}

/** One server's address, from a URL or `host:port`. */
interface Address {
  readonly host: string;
  readonly port: number;
  /** What to connect to: the URL as given (it may carry a password, a db, TLS), or `redis://host:port` (`rediss://` with a CA). */
  readonly url: string;
  /** For messages: `host:port`, and `/db` when the URL picks one; never credentials. */
  readonly address: string;
  /** The URL's user name and password, when it has a password. */
  readonly credentials?: { readonly username?: string; readonly password: string };
  /** A `rediss://` URL, or host:port with a CA. */
  readonly tls: boolean;
}

/** Whether a flag's value has a URL with a password in it. */
function hasPassword(value: string | undefined): boolean {
  return value !== undefined && redactUrls(value) !== value;
}

/**
 * `redis://[user:password@]host[:port][/db]`, `rediss://…` or `host:port`
 * (`[::1]:6379` for IPv6), so each flag takes what the others do. With a CA
 * (`withCa`), host:port connects with TLS, and a `redis://` URL is refused as
 * asking for a plain connection.
 * @throws UsageError naming `flag`, never the password
 */
function parseAddress(entry: string, flag: string, withCa = false): Address {
  if (/^rediss?:\/\//i.test(entry)) {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new UsageError(`${flag}: ${redactUrls(JSON.stringify(entry))} is not a valid URL`);
    }
    const tls = url.protocol.toLowerCase() === 'rediss:';
    if (withCa && !tls)
      throw new UsageError(`${flag}: --tls-ca connects with TLS: give a rediss:// URL or host:port, not ${redactUrls(JSON.stringify(entry))}`);
    const host = url.hostname.replace(/^\[|\]$/g, '') || 'localhost';
    const port = Number(url.port || 6379);
    const db = url.pathname.replace(/^\//, '');
    const credentials =
      url.password === '' ? undefined : { ...(url.username ? { username: decodeURIComponent(url.username) } : {}), password: decodeURIComponent(url.password) };
    return { host, port, url: entry, address: `${hostPort(host, port)}${db && db !== '0' ? `/${db}` : ''}`, credentials, tls };
  }
  const match = /^(?:\[([^\]]+)\]|([^:/[\]\s]+)):(\d{1,5})$/.exec(entry);
  const port = Number(match?.[3]);
  if (!match || port < 1 || port > 65_535) {
    throw new UsageError(`${flag} takes a redis:// or rediss:// URL or host:port, got ${redactUrls(JSON.stringify(entry))}`);
  }
  const host = (match[1] ?? match[2]) as string;
  return { host, port, url: `${withCa ? 'rediss' : 'redis'}://${hostPort(host, port)}`, address: hostPort(host, port), tls: withCa };
}

/** A file's address: its content stays out of every message, as a malformed URL may still hold a password. @throws UsageError */
function parseFileAddress(entry: string, path: string, withCa: boolean): Address {
  try {
    return parseAddress(entry, '--redis-file', withCa);
  } catch (error) {
    const why = withCa && /^redis:\/\//i.test(entry) ? 'a rediss:// URL or host:port (--tls-ca connects with TLS)' : 'a redis:// or rediss:// URL or host:port';
    throw error instanceof UsageError ? new UsageError(`--redis-file: ${JSON.stringify(path)} does not hold ${why}`) : error;
  }
}

/** Longest file the CLI reads (a URL, or a CA bundle): a guard against a path to something else. */
const MAX_FILE_BYTES = 1024 * 1024;

/** @throws UsageError naming `flag` and the path, with the system's reason (never the content). */
function readSmallFile(path: string, flag: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new UsageError(`${flag}: cannot read ${JSON.stringify(path)}${typeof code === 'string' ? ` (${code})` : ''}`);
  }
  if (Buffer.byteLength(text) > MAX_FILE_BYTES) throw new UsageError(`${flag}: ${JSON.stringify(path)} is over ${MAX_FILE_BYTES} bytes`);
  return text;
}

/** The URL in a `--redis-file`: its one line, without surrounding whitespace. @throws UsageError */
function readUrlFile(path: string): string {
  const url = readSmallFile(path, '--redis-file').trim();
  if (url === '' || /[\r\n]/.test(url))
    throw new UsageError(`--redis-file: ${JSON.stringify(path)} must hold one line: a redis:// or rediss:// URL or host:port`);
  return url;
}

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
