import { redactUrls } from './checks/redact.js';

/** Stable codes of rlock's errors. */
export type RLockErrorCode =
  | 'ERR_RLOCK_INVALID_ARGUMENT'
  | 'ERR_RLOCK_ILLEGAL_MONITOR_STATE'
  | 'ERR_RLOCK_LOCK_LOST'
  | 'ERR_RLOCK_ACQUIRE_TIMEOUT'
  | 'ERR_RLOCK_QUORUM'
  | 'ERR_RLOCK_REDIS_UNAVAILABLE'
  | 'ERR_RLOCK_REDIS_COMMAND'
  | 'ERR_RLOCK_CLIENT_CLOSED';

/** Marks every rlock error, in every copy of the package (`Symbol.for` is process-wide). */
const BRAND = Symbol.for('@org/rlock/error');

/** Base class of all rlock errors; `instanceof` works across the ESM and CJS copies of the package (by brand and `code`). */
export abstract class RLockError extends Error {
  /** The class name (`'LockLostError'`, …): stable across builds and minifiers. */
  abstract override readonly name: string;
  /** The stable code of the error's class: branch on it across package versions and copies. */
  abstract readonly code: RLockErrorCode;
  /** @internal */
  readonly [BRAND] = true;
  /** Any URL's password in `message` reads `***`: messages end up in logs. */
  constructor(message: string, options?: { cause?: unknown }) {
    super(redactUrls(message), options);
  }

  /** `instanceof` across module copies: an instance, or a branded rlock error with this class's `code`. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    if (typeof value !== 'object' || value === null || (value as { [BRAND]?: unknown })[BRAND] !== true) return false;
    const code = (this as { code?: unknown }).code;
    return code === undefined || (value as { code?: unknown }).code === code;
  }
}

/** A bad name, duration or option. Raised before any command is sent. */
export class InvalidArgumentError extends RLockError {
  /** The code of every error of this class (what `instanceof` checks across builds). */
  static readonly code = 'ERR_RLOCK_INVALID_ARGUMENT' as const;
  override readonly name = 'InvalidArgumentError' as const;
  readonly code = 'ERR_RLOCK_INVALID_ARGUMENT' as const;
}

/** A call that needs a task was made outside one, or a release of a hold the owner does not have; nothing changed in Redis. */
export class IllegalMonitorStateError extends RLockError {
  /** The code of every error of this class (what `instanceof` checks across builds). */
  static readonly code = 'ERR_RLOCK_ILLEGAL_MONITOR_STATE' as const;
  override readonly name = 'IllegalMonitorStateError' as const;
  readonly code = 'ERR_RLOCK_ILLEGAL_MONITOR_STATE' as const;
}

/** Why a hold was lost; mirrors the `lockLost` event. */
export type LockLostReason = 'expired' | 'taken' | 'forced' | 'unreachable' | 'closed' | 'maxLease';

/** A hold the client had is gone (see {@link LockLostReason}): the critical section may not have been exclusive. */
export class LockLostError extends RLockError {
  /** The code of every error of this class (what `instanceof` checks across builds). */
  static readonly code = 'ERR_RLOCK_LOCK_LOST' as const;
  override readonly name = 'LockLostError' as const;
  readonly code = 'ERR_RLOCK_LOCK_LOST' as const;
  constructor(
    /** The name of the object whose hold was lost. */
    readonly lockName: string,
    /** Why it was lost (see {@link LockLostReason}). */
    readonly reason: LockLostReason,
    /** `detail` extends the default message (what the client measured, e.g. a blocked event loop). */
    options?: { cause?: unknown; message?: string; detail?: string },
  ) {
    const detail = options?.detail === undefined ? '' : `; ${options.detail}`;
    super(options?.message ?? `lock "${lockName}" was lost (${REASONS[reason]})${detail}`, options);
  }
}

/** What each {@link LockLostReason} means, as a lost hold's message says it. */
const REASONS: Readonly<Record<LockLostReason, string>> = {
  expired: 'expired: its key was found gone before it was released',
  taken: 'taken: another owner holds it now',
  forced: 'forced: forceUnlock() released it',
  unreachable: 'unreachable: the lease could not be renewed before it ran out',
  closed: 'closed: the client was closed while holding it',
  maxLease: 'maxLease: it was held for maxLeaseMs, and the watchdog renews a hold no longer than that',
};

/** `waitMs` ran out before the lock was acquired; `cause` is the Redis failure meanwhile, if any. */
export class LockAcquireTimeoutError extends RLockError {
  /** The code of every error of this class (what `instanceof` checks across builds). */
  static readonly code = 'ERR_RLOCK_ACQUIRE_TIMEOUT' as const;
  override readonly name = 'LockAcquireTimeoutError' as const;
  readonly code = 'ERR_RLOCK_ACQUIRE_TIMEOUT' as const;
  /** Who held the lock when the wait ran out (one bounded lookup); undefined when not found in time. */
  readonly holder: TimeoutHolder | undefined;
  constructor(
    /** The name of the object that was not acquired. */
    readonly lockName: string,
    /** The `waitMs` that ran out. */
    readonly waitMs: number,
    options?: { cause?: unknown; holder?: TimeoutHolder },
  ) {
    const holder = options?.holder;
    const why = describeFailure(lockName, options?.cause) ?? (holder ? describeHolder(holder) : undefined);
    super(`lock "${lockName}" was not acquired within ${waitMs} ms${why === undefined ? '' : `: ${why}`}`, options);
    this.holder = holder;
  }
}

/**
 * The connection's own error under a RedisUnavailableError (ECONNREFUSED, ECONNRESET…), or undefined. Not `instanceof
 * Error`: the socket's errors may come from another realm (a test runner's sandbox).
 */
export function socketError(value: unknown): { readonly message: string } | undefined {
  if (typeof value !== 'object' || value === null || value instanceof RLockError) return undefined;
  return typeof (value as { message?: unknown }).message === 'string' ? (value as { message: string }) : undefined;
}

/**
 * A timeout's cause when Redis is why, said in the timeout's own message: read alone, "not acquired within" would
 * suggest that another holder kept the lock. Undefined for any other cause.
 */
function describeFailure(lockName: string, cause: unknown): string | undefined {
  if (!(cause instanceof RLockError)) return undefined;
  // A cause that names the lock first (a QuorumError's `lock "a": …`) is not told the name twice.
  const own = `lock "${lockName}": `;
  const detail = cause.message.startsWith(own) ? cause.message.slice(own.length) : cause.message;
  if (cause.code === 'ERR_RLOCK_QUORUM') return `no majority of the Redlock masters answered (${detail})`;
  if (cause.code !== 'ERR_RLOCK_REDIS_UNAVAILABLE') return undefined;
  const socket = socketError(cause.cause);
  return socket === undefined ? detail : `Redis is unavailable (${socket.message})`;
}

/** The holder of a lock that an acquisition waited for in vain. */
export interface TimeoutHolder {
  /** Its owner id `<clientId>:<taskId>`. */
  readonly owner: string;
  /** Its client's `name` option, host and pid, when its connection is named and CLIENT LIST answered. */
  readonly client?: {
    /** The `name` option of the holder's client. */
    readonly name: string;
    /** The host its process runs on. */
    readonly host: string;
    /** Its process id. */
    readonly pid: number;
  };
  /** How long it has held the lock, ms (from its fencing token), when known. */
  readonly heldMs?: number;
  /** Lease left, ms (-1: no TTL). */
  readonly ttlMs: number;
}

/** `held by orders-api (web-1 pid 4242) for 12.0 s, lease left 18.0 s`; the owner id when the client is unknown. */
function describeHolder(holder: TimeoutHolder): string {
  const { client } = holder;
  // The default name is `<host>:<pid>`: said once.
  const who = !client
    ? holder.owner
    : client.name === `${client.host}:${client.pid}`
      ? `${client.host} pid ${client.pid}`
      : `${client.name} (${client.host} pid ${client.pid})`;
  const seconds = (ms: number): string => `${(ms / 1_000).toFixed(1)} s`;
  const held = holder.heldMs === undefined ? '' : ` for ${seconds(holder.heldMs)}`;
  const lease = holder.ttlMs >= 0 ? `, lease left ${seconds(holder.ttlMs)}` : holder.ttlMs === -1 ? ', no lease' : '';
  return `held by ${who}${held}${lease}`;
}

/** Redis did not answer within `commandTimeoutMs`, or the connection is down. */
export class RedisUnavailableError extends RLockError {
  /** The code of every error of this class (what `instanceof` checks across builds). */
  static readonly code = 'ERR_RLOCK_REDIS_UNAVAILABLE' as const;
  override readonly name = 'RedisUnavailableError' as const;
  readonly code = 'ERR_RLOCK_REDIS_UNAVAILABLE' as const;
}

/** Redis answered with an error (such as WRONGTYPE); the message names the full key. */
export class RedisCommandError extends RLockError {
  /** The code of every error of this class (what `instanceof` checks across builds). */
  static readonly code = 'ERR_RLOCK_REDIS_COMMAND' as const;
  override readonly name = 'RedisCommandError' as const;
  readonly code = 'ERR_RLOCK_REDIS_COMMAND' as const;
  constructor(
    message: string,
    /** The full Redis key the command was about. */
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The client was closed; waiting and new calls are refused. */
export class ClientClosedError extends RLockError {
  /** The code of every error of this class (what `instanceof` checks across builds). */
  static readonly code = 'ERR_RLOCK_CLIENT_CLOSED' as const;
  override readonly name = 'ClientClosedError' as const;
  readonly code = 'ERR_RLOCK_CLIENT_CLOSED' as const;
  constructor(message = 'the rlock client is closed', options?: { cause?: unknown }) {
    super(message, options);
  }
}
