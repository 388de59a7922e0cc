import { hostname } from 'node:os';
import type { LeaseRenewerFactory } from '../engine/renewal.js';
import { checkKeyPrefix } from '../objects/names.js';
import type { RedisInput } from '../connection/endpoints.js';
import { checkBoolean, checkDurationMs, checkFunction, checkKnownKeys, checkOptionsObject, describeValue, isWellFormed } from '../checks/argument-checks.js';
import type { SyncReplicas } from '../connection/deployment.js';
import type { ClusterInput } from '../connection/create-deployment.js';
import { OptionReader } from '../checks/option-reader.js';
import { InvalidArgumentError } from '../errors.js';
import { printRedacted } from '../checks/redact.js';

/** The options every client takes, on one Redis or across Redlock masters. */
export interface CommonClientOptions {
  /** Prefix of every key and channel, `<keyPrefix>:{<name>}`; no braces. @default 'rlock' */
  readonly keyPrefix?: string;
  /** Lease of a hold taken without `leaseMs`, in ms (at least 30), renewed every third of it. @default 30_000 */
  readonly watchdogTimeoutMs?: number;
  /**
   * Bound on every Redis call in ms (then RedisUnavailableError), at most ⌊watchdogTimeoutMs / 3⌋ so a timed-out renewal can be retried within the lease.
   * @default min(5_000, ⌊watchdogTimeoutMs / 3⌋)
   */
  readonly commandTimeoutMs?: number;
  /** Builds the lease renewer (`@org/rlock`'s factories wire the watchdog); without one, leases are fixed. @default undefined */
  readonly renewer?: LeaseRenewerFactory;
  /** Record a stack trace per first acquisition so a leaked hold (`holdLeaked`) names its caller: for hunting leaks, not production. @default false */
  readonly captureLeakStacks?: boolean;
  /**
   * This client's name for people (1 to 128 characters), shown with host and pid by `inspect()`, the CLI and LockAcquireTimeoutError; sent as CLIENT SETNAME.
   * @default `<hostname>:<pid>`
   */
  readonly name?: string;
  /**
   * Maps a lock's name to the `rlock.name` metric attribute (`undefined` or a throw leaves it out); map to few labels (`'order:42'` to `'order'`).
   * @default undefined
   */
  readonly metricName?: (name: string) => string | undefined;
}

/** Options of a client of one Redis. Checked once, when the client is created. */
export interface RLockClientOptions extends CommonClientOptions {
  /**
   * A `redis://` URL, `host:port` or ioredis options (rlock owns the connection), an ioredis instance (left open), Sentinel `{ sentinels, name }`,
   * or a Cluster (Redis ≥ 7.0) as a `Cluster` or `{ cluster: [urls], ...clusterOptions }`; none with a `keyPrefix` of its own.
   */
  readonly redis: RedisInput | ClusterInput;
  /**
   * Keep the process alive only while a hold, wait or call is in progress, so a program without `close()` ends; given instances and Clusters stay referenced.
   * @default true
   */
  readonly unrefWhenIdle?: boolean;
  /**
   * WAIT for `replicas` replicas within `timeoutMs` after every acquire and renewal, so a failover cannot give one lock to two holders;
   * too few acknowledgements undo an acquire, fail a renewal, or reject a latch write after it happened.
   * @default undefined
   */
  readonly syncReplicas?: {
    /** Replicas that must acknowledge each write (at least 1). */
    readonly replicas: number;
    /** How long WAIT waits for them, in ms (below commandTimeoutMs). */
    readonly timeoutMs: number;
  };
}

/** The defaults of {@link CommonClientOptions}, in one frozen object. */
export const CLIENT_DEFAULTS = Object.freeze({
  /** @see CommonClientOptions.keyPrefix */
  keyPrefix: 'rlock',
  /** @see CommonClientOptions.watchdogTimeoutMs */
  watchdogTimeoutMs: 30_000,
  /** Shortest `watchdogTimeoutMs` accepted: its third, the renewal period, is then 10 ms. */
  minWatchdogTimeoutMs: 30,
  /** `commandTimeoutMs` is min(this, ⌊watchdogTimeoutMs / 3⌋) unless given. */
  maxCommandTimeoutMs: 5_000,
  /** @see CommonClientOptions.captureLeakStacks */
  captureLeakStacks: false,
  /** @see RLockClientOptions.unrefWhenIdle */
  unrefWhenIdle: true,
  /** Longest `name` accepted, in characters. */
  maxNameLength: 128,
});

/** {@link CommonClientOptions} with every default filled in. */
export interface ResolvedCommonOptions {
  readonly keyPrefix: string;
  readonly watchdogTimeoutMs: number;
  readonly commandTimeoutMs: number;
  readonly renewer: LeaseRenewerFactory | undefined;
  readonly captureLeakStacks: boolean;
  readonly name: string;
  readonly metricName: ((name: string) => string | undefined) | undefined;
}

export interface ResolvedClientOptions extends ResolvedCommonOptions {
  readonly redis: unknown;
  readonly syncReplicas: SyncReplicas | undefined;
  readonly unrefWhenIdle: boolean;
}

/** Names of the common options, for a reader's list of known ones. */
export const COMMON_OPTION_NAMES = ['keyPrefix', 'watchdogTimeoutMs', 'commandTimeoutMs', 'renewer', 'captureLeakStacks', 'name', 'metricName'] as const;

/** Reads the common options, recording every problem on `reader`. */
export function readCommonOptions(reader: OptionReader): ResolvedCommonOptions {
  const keyPrefix = reader.read('keyPrefix', checkKeyPrefix, CLIENT_DEFAULTS.keyPrefix);
  const watchdogTimeoutMs = reader.read(
    'watchdogTimeoutMs',
    (value) => checkDurationMs(value, 'watchdogTimeoutMs', CLIENT_DEFAULTS.minWatchdogTimeoutMs, 'a renewal every third of it'),
    CLIENT_DEFAULTS.watchdogTimeoutMs,
  );
  const third = Math.floor(watchdogTimeoutMs / 3);
  const commandTimeoutMs = reader.read(
    'commandTimeoutMs',
    (value) => {
      const ms = checkDurationMs(value, 'commandTimeoutMs');
      if (ms > third) {
        throw new InvalidArgumentError(
          `commandTimeoutMs (${ms}) must be at most ⌊watchdogTimeoutMs / 3⌋ (${third}), so a timed-out renewal can be retried within the lease`,
        );
      }
      return ms;
    },
    Math.min(CLIENT_DEFAULTS.maxCommandTimeoutMs, third),
  );
  const renewer = reader.read('renewer', (value) => checkFunction<LeaseRenewerFactory>(value, 'renewer'), undefined);
  const captureLeakStacks = reader.read('captureLeakStacks', (value) => checkBoolean(value, 'captureLeakStacks'), CLIENT_DEFAULTS.captureLeakStacks);
  const name = reader.read(
    'name',
    (value) => {
      if (typeof value !== 'string' || value.length === 0 || value.length > CLIENT_DEFAULTS.maxNameLength || !isWellFormed(value)) {
        throw new InvalidArgumentError(`name must be a well-formed string of 1 to ${CLIENT_DEFAULTS.maxNameLength} characters, got ${describeValue(value)}`);
      }
      return value;
    },
    `${hostname()}:${process.pid}`,
  );
  const metricName = reader.read('metricName', (value) => checkFunction<(name: string) => string | undefined>(value, 'metricName'), undefined);
  return { keyPrefix, watchdogTimeoutMs, commandTimeoutMs, renewer, captureLeakStacks, name, metricName };
}

/** @throws InvalidArgumentError listing every bad option. */
export function resolveClientOptions(options: unknown): ResolvedClientOptions {
  const reader = new OptionReader(options, ['redis', ...COMMON_OPTION_NAMES, 'syncReplicas', 'unrefWhenIdle'], 'client options');
  if (reader.raw.redis === undefined) reader.problem('redis is required (a URL, ioredis options or an ioredis instance)');
  const common = readCommonOptions(reader);
  const syncReplicas = reader.read(
    'syncReplicas',
    (value) => {
      const raw = checkOptionsObject(value, 'syncReplicas');
      checkKnownKeys(raw, ['replicas', 'timeoutMs'], 'syncReplicas');
      const replicas = raw.replicas;
      if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 1 || replicas > 64) {
        throw new InvalidArgumentError(`syncReplicas.replicas must be an integer from 1 to 64, got ${describeValue(replicas)}`);
      }
      const timeoutMs = checkDurationMs(raw.timeoutMs, 'syncReplicas.timeoutMs');
      if (timeoutMs >= common.commandTimeoutMs) {
        throw new InvalidArgumentError(`syncReplicas.timeoutMs (${timeoutMs}) must be below commandTimeoutMs (${common.commandTimeoutMs})`);
      }
      return { replicas, timeoutMs };
    },
    undefined as SyncReplicas | undefined,
  );
  const unrefWhenIdle = reader.read('unrefWhenIdle', (value) => checkBoolean(value, 'unrefWhenIdle'), CLIENT_DEFAULTS.unrefWhenIdle);
  reader.done();
  return printRedacted({ redis: reader.raw.redis, ...common, syncReplicas, unrefWhenIdle });
}
