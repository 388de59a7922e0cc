import { hostname } from 'node:os';
import type { LeaseRenewerFactory } from '../engine/renewal.js';
import { checkKeyPrefix } from '../objects/names.js';
import type { RedisInput } from '../connection/endpoints.js';
import { checkBoolean, checkDurationMs, checkFunction, checkKnownKeys, checkOptionsObject, describeValue } from '../checks/argument-checks.js';
import type { SyncReplicas } from '../connection/deployment.js';
import type { ClusterInput } from '../connection/create-deployment.js';
import { OptionReader } from '../checks/option-reader.js';
import { InvalidArgumentError } from '../errors.js';

/** The options every client takes, on one Redis or across Redlock masters. */
export interface CommonClientOptions {
  /**
   * Prefix of every key and channel: `<keyPrefix>:{<name>}`. No braces.
   * @default 'rlock'
   */
  readonly keyPrefix?: string;
  /**
   * Lease of a hold taken without `leaseMs`, in ms; the watchdog renews it every
   * third of it. It also caps a waiter's sleep at a third of it. At least 30 ms,
   * so the renewal period stays well above timer granularity.
   * @default 30_000
   */
  readonly watchdogTimeoutMs?: number;
  /**
   * rlock's own limit on every Redis call, in ms, whatever ioredis's retry
   * settings: past it the call rejects with RedisUnavailableError. At most
   * ⌊watchdogTimeoutMs / 3⌋, so a renewal that times out still leaves time to
   * retry within the lease.
   * @default min(5_000, ⌊watchdogTimeoutMs / 3⌋)
   */
  readonly commandTimeoutMs?: number;
  /**
   * Builds the lease renewer (the watchdog). `@org/rlock`'s `createClient` and
   * `createRedlock` wire `@org/rlock-watchdog`; without one the client takes
   * fixed leases only.
   * @default undefined
   */
  readonly renewer?: LeaseRenewerFactory;
  /**
   * Record where each hold was first acquired (a stack trace), so a hold
   * that outlives its task (`holdLeaked`, warning `RLOCK_HOLD_LEAKED`) names
   * the call that took it. Costs a stack trace per first acquisition: turn it
   * on while hunting a leak, not in production. Off, the report names the
   * lock, its owner and the task.
   * @default false
   */
  readonly captureLeakStacks?: boolean;
  /**
   * A name for this client, for people: `inspect()`, `rlock show` and `ls`,
   * and a LockAcquireTimeoutError show it, with its host and pid, for a lock
   * this client holds. It travels in the name of the connections rlock
   * creates (CLIENT SETNAME), never in a key. 1 to 128 characters.
   * @default `<hostname>:<pid>`
   */
  readonly name?: string;
  /**
   * Maps a lock's name to the `rlock.name` attribute of rlock's metrics; what
   * it returns becomes the attribute, `undefined` leaves it out. Names are
   * per order, per user…: map them to a small set of labels, or a metrics
   * backend drowns in series. Without it no name is ever an attribute (spans
   * carry the name as it is). Called once per acquisition while a
   * MeterProvider or a subscriber listens; one that throws leaves the name out.
   * @default undefined
   * @example
   * metricName: (name) => name.split(':')[0] // 'order:42' -> 'order'
   */
  readonly metricName?: (name: string) => string | undefined;
}

/** Options of a client of one Redis. Checked once, when the client is created. */
export interface RLockClientOptions extends CommonClientOptions {
  /**
   * The Redis to use: a `redis://` URL or ioredis options (rlock then owns the
   * connection, pipelines automatically and closes it on `close()`), or an
   * ioredis instance (used as is and left open); Sentinel through ioredis's
   * `{ sentinels, name }` options; a Cluster as an ioredis `Cluster` instance
   * or `{ cluster: [urls], ...clusterOptions }` (Redis ≥ 7.0: sharded pub/sub).
   * Instances and options with their own `keyPrefix` are refused.
   */
  readonly redis: RedisInput | ClusterInput;
  /**
   * Keep the process alive only while the client has work in progress, as
   * Node's idle sockets and timers (`unref()`) do: its connections (the one
   * it created from a URL or options, and its subscriber connection) hold the
   * process open while a lock or permit is held, a call waits to acquire, or
   * a command is in flight, and not otherwise. A program that forgets
   * `close()` then still ends once its main code is done; one that holds a
   * lock keeps running. `false`: the connections keep the process alive
   * until `close()`, as ioredis's do. A connection passed in as an instance
   * is never touched; on a Cluster the connections always stay referenced.
   * @default true
   */
  readonly unrefWhenIdle?: boolean;
  /**
   * Replica acknowledgement (opt-in): after every acquire and renewal, WAIT
   * for `replicas` replicas within `timeoutMs` (below commandTimeoutMs). Too
   * few acknowledgements: the acquire counts as not acquired (its grant is
   * released) and a renewal as failed (retried until the lease's deadline,
   * then the hold is lost). Without it, an asynchronous failover can hand the
   * same lock to two holders without either being told. A semaphore's acquire
   * is undone the same way; a latch's `trySetCount` and `countDown` cannot be
   * undone and reject after the write instead.
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
  const renewer = reader.read(
    'renewer',
    (value) => {
      checkFunction(value, 'renewer');
      return value as LeaseRenewerFactory;
    },
    undefined,
  );
  const captureLeakStacks = reader.read('captureLeakStacks', (value) => checkBoolean(value, 'captureLeakStacks'), CLIENT_DEFAULTS.captureLeakStacks);
  const name = reader.read(
    'name',
    (value) => {
      if (typeof value !== 'string' || value.length === 0 || value.length > CLIENT_DEFAULTS.maxNameLength) {
        throw new InvalidArgumentError(`name must be a string of 1 to ${CLIENT_DEFAULTS.maxNameLength} characters, got ${describeValue(value)}`);
      }
      return value;
    },
    `${hostname()}:${process.pid}`,
  );
  const metricName = reader.read(
    'metricName',
    (value) => {
      checkFunction(value, 'metricName');
      return value as (name: string) => string | undefined;
    },
    undefined,
  );
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
  return { redis: reader.raw.redis, ...common, syncReplicas, unrefWhenIdle };
}
