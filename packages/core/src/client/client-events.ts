import type { LockLostError, LockLostReason } from '../errors.js';

/** A hold, as events describe it. */
export interface HoldEvent {
  /** The object's name. */
  readonly name: string;
  /** The owner id `<clientId>:<taskId>` of the hold. */
  readonly owner: string;
  /** The hold's fencing token (undefined on Redlock). */
  readonly token: string | undefined;
}

/** Payload of `lockAcquired`: one acquisition was granted. */
export interface LockAcquiredEvent extends HoldEvent {
  /** The owner's hold count after this acquisition (1: first acquisition). */
  readonly count: number;
}

/** Payload of `lockReleased`: an owner's last hold ended. */
export interface LockReleasedEvent extends HoldEvent {
  /** `unlock`: confirmed; `retry`: a failed release finished in the background; `expiry`: never confirmed, so the key expired. */
  readonly via: 'unlock' | 'retry' | 'expiry';
}

/** Payload of `lockLost`: a hold the client had is gone. */
export interface LockLostEvent extends HoldEvent {
  /**
   * Why: `expired` (key gone, or a fixed lease ran out), `taken` (another owner), `forced` (forceUnlock), `unreachable` (not renewed in time),
   * `closed` (client.close()) or `maxLease` (held for its `maxLeaseMs`).
   */
  readonly reason: LockLostReason;
  /** The error the hold's signal aborted with. */
  readonly error: LockLostError;
}

/** Payload of `lockRenewed`: one renewal call succeeded. */
export interface LockRenewedEvent {
  /** Holds renewed by one script call. */
  readonly count: number;
}

/** Payload of `holdLeaked`: a task ended still holding a lock, which stays renewed until `forceUnlock()`, `close()` or exit. */
export interface HoldLeakedEvent extends HoldEvent {
  /** Acquisitions of the task still held (not counting those a handle carries). */
  readonly count: number;
  /** The task's id (the second half of `owner`). */
  readonly taskId: string;
  /** How the task was started: `client.task(fn)` (`task`) or `taskMiddleware()` (`request`). */
  readonly source: 'task' | 'request';
  /** Where the hold was first acquired (with `captureLeakStacks: true`), else undefined. */
  readonly stack: string | undefined;
}

/** Payload of `warning` (code `RLOCK_EVICTION_POLICY`): a server rlock uses may evict its keys, so two holders could hold one lock. */
export interface EvictionPolicyWarning {
  /** The warning's code, also the process warning's. */
  readonly code: 'RLOCK_EVICTION_POLICY';
  /** What is wrong and what to do, as the process warning says it. */
  readonly message: string;
  /** The server: `host:port`, a socket path, or `Sentinel master "<name>"`. */
  readonly server: string;
  /** Its `maxmemory-policy`. */
  readonly policy: string;
  /** Its `maxmemory` in bytes (0: no limit set yet), when it said. */
  readonly maxmemoryBytes: number | undefined;
}

/** Payload of `warning`: something about the deployment that puts rlock's guarantees at risk, told once per client. */
export type ClientWarning = EvictionPolicyWarning;

/** Typed events of a client (eventemitter3: an `error` without listeners is dropped, never thrown). */
export interface RLockClientEvents {
  /** An acquisition was granted (first or reentrant). */
  lockAcquired: (event: LockAcquiredEvent) => void;
  /** The owner's last hold was released (count reached 0), or a failed release was finished. */
  lockReleased: (event: LockReleasedEvent) => void;
  /** The watchdog renewed a batch of leases. */
  lockRenewed: (event: LockRenewedEvent) => void;
  /** A hold was lost: its signal aborted (see {@link LockLostEvent.reason}). */
  lockLost: (event: LockLostEvent) => void;
  /** A task ended still holding a lock (also a `RLOCK_HOLD_LEAKED` process warning). */
  holdLeaked: (event: HoldLeakedEvent) => void;
  /** A failure in the background (a renewal to retry, a best-effort cleanup). */
  error: (error: Error) => void;
  /** A risk in the deployment (also a process warning with the same code), e.g. a `maxmemory-policy` that can evict lock keys. */
  warning: (warning: ClientWarning) => void;
}
