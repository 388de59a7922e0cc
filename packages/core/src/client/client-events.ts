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
  /**
   * How the hold ended: `unlock` (the release was confirmed), `retry` (the
   * release failed, the client finished it in the background, and it is
   * confirmed now), `expiry` (the release could not be confirmed before the
   * lease ran out: the key has expired on its own by now).
   */
  readonly via: 'unlock' | 'retry' | 'expiry';
}

/** Payload of `lockLost`: a hold the client had is gone. */
export interface LockLostEvent extends HoldEvent {
  /**
   * Why: `expired` (the key was found gone, or a fixed lease ran out), `taken`
   * (another owner), `forced` (forceUnlock), `unreachable` (not renewed before
   * the lease ran out), `closed` (client.close()), or `maxLease` (held for its
   * `maxLeaseMs`: renewal stopped and the key was cleared).
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

/**
 * Payload of `holdLeaked`: a task ended (its `client.task(fn)` settled, or its
 * request's response closed under `taskMiddleware()`) while it still held a
 * lock that no release is on its way for. Nobody can release it through the
 * task any more: it is renewed until `forceUnlock()`, `close()`, or the
 * process ends, and every later caller waits. rlock does not release it
 * (code of the task may still run and rely on it): fix the code that took it.
 */
export interface HoldLeakedEvent extends HoldEvent {
  /** Acquisitions of the task still held (not counting those a handle carries). */
  readonly count: number;
  /** The task's id (the second half of `owner`). */
  readonly taskId: string;
  /** How the task was started: `client.task(fn)` (`task`) or `taskMiddleware()` (`request`). */
  readonly source: 'task' | 'request';
  /**
   * Where the hold was first acquired: a stack trace when the client was
   * created with `captureLeakStacks: true`, else undefined.
   */
  readonly stack: string | undefined;
}

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
  /**
   * A task ended still holding a lock (see {@link HoldLeakedEvent}); a
   * process warning with code `RLOCK_HOLD_LEAKED` says the same, once per hold.
   */
  holdLeaked: (event: HoldLeakedEvent) => void;
  /** A failure in the background (a renewal to retry, a best-effort cleanup). */
  error: (error: Error) => void;
}
