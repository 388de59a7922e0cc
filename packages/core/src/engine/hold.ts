import { LockLostError, type LockLostReason } from '../errors.js';
import type { RenewableHold } from './renewal.js';
import { leaseDeadline, monotonicNow } from './time.js';

/** How a hold reports what happens to it; the client turns these into renewal and events. */
export interface HoldObserver {
  startRenewal(hold: Hold): void;
  stopRenewal(hold: Hold): void;
  lost(hold: Hold, error: LockLostError): void;
}

export type HoldState = 'held' | 'released' | 'lost';

/** What a hold is of and how its lease is counted: data, so one Hold serves every object. */
export interface HoldSpec {
  /** The object's name as the user gave it. */
  readonly name: string;
  /** Full Redis key the lease is on. */
  readonly key: string;
  /** The mode held ('' for an exclusive lock; 'read', 'write'…): a registry slot of its own. */
  readonly mode: string;
  /** Renewal kind (see RenewalRouter). */
  readonly kind: string;
  readonly owner: string;
  /** Fencing token of the hold (undefined where there is none, as on Redlock). */
  readonly token: string | undefined;
  /** Lease of an acquisition taken without a fixed one, in ms. */
  readonly watchdogLeaseMs: number;
  /** Drift allowed per ms of lease (the deadline is sentAt + lease − lease × factor − 2 ms). */
  readonly driftFactor: number;
  /** The observer told of renewal and losses. */
  readonly observer: HoldObserver;
}

/**
 * What one owner holds of one object in one mode: every nested acquisition
 * shares this hold's lease, deadline, token and signal (the lease only grows).
 * `count` is the owner's hold count as the object counts it (mirrored from
 * Redis, or counted here when only the first and last reach Redis); a flag per
 * acquisition still held says whether it was taken without a fixed lease,
 * because the watchdog runs while any of them was. `grant` is the object's own
 * data about the hold (Redlock: the token each master gave).
 */
export class Hold<G = unknown> implements RenewableHold {
  readonly name: string;
  readonly key: string;
  readonly mode: string;
  readonly kind: string;
  readonly owner: string;
  readonly token: string | undefined;
  state: HoldState = 'held';
  count = 0;
  deadline: number;
  leaseMs: number;
  lostError: LockLostError | undefined;
  /** An older generation of this owner's hold that was lost while counts were outstanding. */
  previous: Hold<G> | undefined;
  /** The release that takes the count to 0 went out: from then on it is released or lost, never held again. */
  releaseSent = false;
  grant: G | undefined;
  private readonly watchdogLeaseMs: number;
  private readonly driftFactor: number;
  private readonly observer: HoldObserver;
  private readonly watchdogFlags: boolean[] = [];
  // Made on first use: an AbortController costs several µs, and Java-style
  // lock()/unlock() callers never look at the signal.
  private controller: AbortController | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;

  constructor(spec: HoldSpec, grant?: G) {
    this.name = spec.name;
    this.key = spec.key;
    this.mode = spec.mode;
    this.kind = spec.kind;
    this.owner = spec.owner;
    this.token = spec.token;
    this.watchdogLeaseMs = spec.watchdogLeaseMs;
    this.driftFactor = spec.driftFactor;
    this.observer = spec.observer;
    this.grant = grant;
    this.deadline = monotonicNow();
    this.leaseMs = 0;
  }

  get active(): boolean {
    return this.state === 'held';
  }

  /**
   * Held, and its deadline (the end of the lease certain on the server) has not
   * passed: what a nested acquisition counted in the client, or a read of the
   * current task's hold, may rely on. A timer that fires late must not leave a
   * hold looking alive past its deadline.
   */
  get certain(): boolean {
    return this.active && monotonicNow() < this.deadline;
  }

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.lostError && !this.controller.signal.aborted) this.controller.abort(this.lostError);
    return this.controller.signal;
  }

  /** True while any acquisition in the stack was taken without a fixed lease. */
  get renewed(): boolean {
    return this.watchdogFlags.includes(true);
  }

  /**
   * Records one granted acquisition that leaves the owner's count at `count`.
   * `sentAt` is when the command that set the lease went out (undefined for an
   * acquisition that did not reach Redis); `leaseMs` undefined means a
   * watchdog lease. The deadline only grows, as the server's TTL does.
   */
  acquired(count: number, sentAt: number | undefined, leaseMs: number | undefined): void {
    const lease = leaseMs ?? this.watchdogLeaseMs;
    this.count = count;
    this.watchdogFlags.push(leaseMs === undefined);
    if (sentAt !== undefined) this.deadline = Math.max(this.deadline, leaseDeadline(sentAt, lease, this.driftFactor));
    this.leaseMs = Math.max(this.leaseMs, lease);
    this.applyLeaseMode();
  }

  /** Records one release that left `remaining` counts. */
  releasedOne(remaining: number): void {
    this.watchdogFlags.pop();
    this.count = remaining;
    if (remaining <= 0) {
      this.finish('released');
      return;
    }
    this.applyLeaseMode();
  }

  // After every acquisition or release, not only on a change: a reentrant
  // acquire racing what looked like the last release (renewal already stopped)
  // must restart renewal. Adding a hold the renewer already has is a no-op.
  private applyLeaseMode(): void {
    if (this.renewed) {
      this.clearExpiryTimer();
      this.observer.startRenewal(this);
    } else {
      this.observer.stopRenewal(this);
      this.armExpiryTimer();
    }
  }

  /**
   * The release that should take the count to 0 is about to be sent: stop
   * renewing now, so a renewal racing it cannot come back "gone" and report a
   * clean release as a loss. There is no way back: once it went out, the hold is
   * released or lost (a failed release is finished in the background).
   */
  beginFinalRelease(): void {
    this.releaseSent = true;
    this.observer.stopRenewal(this);
  }

  /** A renewal sent at `sentAt` succeeded. */
  extend(sentAt: number): void {
    if (!this.active) return;
    this.deadline = Math.max(this.deadline, leaseDeadline(sentAt, this.leaseMs, this.driftFactor));
  }

  lose(reason: LockLostReason, cause?: unknown): void {
    if (!this.active) return;
    const error = new LockLostError(this.name, reason, { cause });
    this.lostError = error;
    this.finish('lost');
    this.controller?.abort(error);
    this.observer.lost(this, error);
  }

  private finish(state: HoldState): void {
    this.state = state;
    this.clearExpiryTimer();
    this.observer.stopRenewal(this);
  }

  // A fixed lease is never renewed: its signal aborts at its deadline.
  private armExpiryTimer(): void {
    this.clearExpiryTimer();
    const delay = Math.max(0, Math.ceil(this.deadline - monotonicNow()));
    this.expiryTimer = setTimeout(() => this.lose('expired'), delay);
    this.expiryTimer.unref();
  }

  private clearExpiryTimer(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
  }
}
