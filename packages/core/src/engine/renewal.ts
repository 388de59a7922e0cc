/**
 * The renewal seam: the engine takes watchdog leases only through a
 * {@link LeaseRenewer}, and a renewer talks to Redis only through the
 * {@link RenewalBackend} the client gives it (its `HoldKinds`).
 * `@org/rlock-watchdog` implements the renewer; core alone never takes a lease
 * without one (a `lock()` without `leaseMs` needs a renewer).
 */

import type { LockLostReason } from '../errors.js';

/** Why a hold was lost. A key found gone is `expired`; found with another owner or token, `taken`. */
export type LostReason = LockLostReason;

/** What one renewal of one hold found on the server. */
export type RenewOutcome = 'renewed' | 'gone' | 'taken';

/**
 * A held lease the renewer keeps alive. Core owns the object and its state;
 * the renewer reads it and reports back through {@link RenewableHold.extend} and
 * {@link RenewableHold.lose}.
 */
export interface RenewableHold {
  /** The object's name as the user gave it. */
  readonly name: string;
  /**
   * What is renewed (a lock hold, a waiter lease, a permit…), and so which
   * registered `HoldKind` renews it. Holds of one kind share a batch.
   */
  readonly kind: string;
  /** Full Redis key the lease is on. */
  readonly key: string;
  /** `<clientId>:<taskId>` */
  readonly owner: string;
  /** Fencing token of the hold, a decimal string (`undefined` for Redlock). */
  readonly token: string | undefined;
  /** Lease each renewal sets, in ms. */
  readonly leaseMs: number;
  /** Monotonic time (performance.now(), ms) until which the lease is certain. */
  readonly deadline: number;
  /** False once the hold is released or lost: the renewer must ignore it from then on. */
  readonly active: boolean;
  /**
   * Monotonic time (ms) after which the hold must not be renewed (its
   * `maxLeaseMs` cap): the renewer loses it with reason `maxLease` instead.
   * Undefined: no cap.
   */
  readonly maxLeaseAt?: number | undefined;
  /**
   * The renewer's slot (a hold has one renewer): what it keeps of this hold,
   * so it needs no map from holds to its entries. Core never reads it.
   */
  renewal?: unknown;
  /**
   * Record a successful renewal. `sentAt` is the monotonic time taken *before*
   * the renewal was sent; the new deadline is sentAt + leaseMs − drift.
   * Ignored when the hold is no longer active.
   */
  extend(sentAt: number): void;
  /**
   * Mark the hold lost: aborts its signal with a LockLostError and emits
   * `lockLost`. Idempotent. `detail` is appended to the error's message
   * (what the renewer measured, e.g. an event loop blocked past the lease).
   */
  lose(reason: LostReason, cause?: unknown, detail?: string): void;
}

/**
 * How a renewer reaches Redis. `renew` takes holds that share a server and a hash
 * slot (see {@link RenewalBackend.batchKey}), at most {@link RenewalBackend.maxBatch}
 * of them, and renews them with one script call, returning one outcome per hold in
 * order. It rejects (RedisUnavailableError, RedisCommandError) when the call failed
 * as a whole; such a failure is transient until the holds' deadlines pass.
 */
export interface RenewalBackend {
  readonly maxBatch: number;
  /** Holds with the same batch key may share one renew call. */
  batchKey(hold: RenewableHold): string;
  renew(holds: readonly RenewableHold[]): Promise<RenewOutcome[]>;
}

/** Events a renewer reports through. */
export interface RenewalReporter {
  /** A batch of `count` holds was renewed. */
  renewed(count: number): void;
  /** A background failure that is not (yet) a loss, e.g. a renewal to retry. */
  error(error: Error): void;
}

/** The scheduler that keeps watchdog leases alive. One per client. */
export interface LeaseRenewer {
  /** Start renewing `hold` every `hold.leaseMs / 3`. Adding an active hold twice is a no-op. */
  add(hold: RenewableHold): void;
  /** Stop renewing `hold` now: no renewal sent after this call may extend it. */
  remove(hold: RenewableHold): void;
  /** Renew every hold now (after a reconnect: a hold the server lost is found at once). Optional. */
  renewNow?(): void;
  /** Stop all renewal; resolves once no renewal is in flight. */
  close(): Promise<void>;
}

/** Builds a client's renewer from the backend and reporter the client provides. */
export type LeaseRenewerFactory = (backend: RenewalBackend, reporter: RenewalReporter) => LeaseRenewer;
