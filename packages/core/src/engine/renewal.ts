// The renewal seam: the engine renews only through a LeaseRenewer (`@org/rlock-watchdog`), which reaches Redis only through a RenewalBackend.

import type { LockLostReason } from '../errors.js';

/** Why a hold was lost. A key found gone is `expired`; found with another owner or token, `taken`. */
export type LostReason = LockLostReason;

/** What one renewal of one hold found on the server. */
export type RenewOutcome = 'renewed' | 'gone' | 'taken';

/** A held lease the renewer keeps alive: core owns it; the renewer reports back through `extend` and `lose`. */
export interface RenewableHold {
  readonly name: string;
  /** Which registered `HoldKind` renews it (lock hold, permit…); one kind shares a batch. */
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
  /** Monotonic ms past which the hold is lost (`maxLease`) instead of renewed; undefined: no cap. */
  readonly maxLeaseAt?: number | undefined;
  /** The renewer's own slot on the hold (spares it a map); core never reads it. */
  renewal?: unknown;
  /** A renewal sent at monotonic `sentAt` (taken before the send) succeeded: deadline sentAt + leaseMs − drift; ignored once inactive. */
  extend(sentAt: number): void;
  /** Mark the hold lost (aborts its signal, emits `lockLost`); idempotent. `detail` extends the message. */
  lose(reason: LostReason, cause?: unknown, detail?: string): void;
}

/** `renew` takes up to `maxBatch` holds of one batch key in one call: an outcome per hold, in order; rejects when the whole call failed. */
export interface RenewalBackend {
  readonly maxBatch: number;
  /** Holds with the same batch key may share one renew call. */
  batchKey(hold: RenewableHold): string;
  renew(holds: readonly RenewableHold[]): Promise<RenewOutcome[]>;
}

export interface RenewalReporter {
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
