import { IllegalMonitorStateError, LockLostError, type LockLostReason } from '../errors.js';
import type { RenewableHold } from './renewal.js';
import { leaseDeadline, monotonicNow } from '../connection/time.js';

/** How a hold reports what happens to it; the client turns these into renewal and events. */
export interface HoldObserver {
  startRenewal(hold: Hold): void;
  stopRenewal(hold: Hold): void;
  lost(hold: Hold, error: LockLostError): void;
  /** True when someone listens for losses (`lockLost`): a fixed lease's end must then be reported on time. */
  watchesLosses(): boolean;
  /** A hold was made, held (the client counts what it holds). */
  began?(hold: Hold): void;
  /** A hold stopped being held (released or lost). */
  ended?(hold: Hold): void;
}

export type HoldState = 'held' | 'released' | 'lost';

/** Who holds what: the hold an acquisition creates or reenters, and how its lease is counted (data, so one Hold serves every object). */
export interface HoldTarget {
  /** The object's name as the user gave it. */
  readonly name: string;
  /** Full Redis key the lease is on. */
  readonly key: string;
  /** The mode held ('' for an exclusive lock; 'read', 'write'…): a registry slot of its own. */
  readonly mode: string;
  /** Renewal kind (see HoldKinds). */
  readonly kind: string;
  readonly owner: string;
  /** One holder at a time in this mode: a grant to one owner means any other owner of this client lost it. */
  readonly exclusive: boolean;
  /** Drift allowed per ms of lease (the deadline is sentAt + lease − lease × factor − 2 ms). */
  readonly driftFactor: number;
}

/**
 * What one owner holds of one object in one mode: nested acquisitions share its
 * lease (which only grows), deadline, token and signal. `count` mirrors Redis,
 * or is counted here where only the first and last reach Redis. A flag per
 * acquisition says whether it took a watchdog lease: renewal runs while any
 * one did. `grant` is the object's own data (Redlock: each master's token).
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
  /**
   * Acquisitions that a scope (withLock) or a handle releases itself when it
   * ends: a bare unlock() may not take the count below them.
   */
  scoped = 0;
  grant: G | undefined;
  /**
   * Monotonic time (ms) past which the hold is neither renewed nor relied on
   * (`maxLeaseMs`): then it is lost with reason `maxLease`. Undefined: no cap.
   */
  maxLeaseAt: number | undefined;
  private maxLeaseTimer: NodeJS.Timeout | undefined;
  private readonly watchdogLeaseMs: number;
  private readonly driftFactor: number;
  private readonly observer: HoldObserver;
  private readonly watchdogFlags: boolean[] = [];
  // Made on first use: an AbortController costs several µs, and Java-style
  // lock()/unlock() callers never look at the signal.
  private controller: AbortController | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  /** The renewer has this hold. */
  private renewing = false;

  constructor(
    target: HoldTarget,
    /** Fencing token of the hold (undefined where there is none, as on Redlock). */
    token: string | undefined,
    /** Lease of an acquisition taken without a fixed one, in ms. */
    watchdogLeaseMs: number,
    /** Told of renewal and losses. */
    observer: HoldObserver,
    grant: G | undefined,
  ) {
    this.name = target.name;
    this.key = target.key;
    this.mode = target.mode;
    this.kind = target.kind;
    this.owner = target.owner;
    this.driftFactor = target.driftFactor;
    this.token = token;
    this.watchdogLeaseMs = watchdogLeaseMs;
    this.observer = observer;
    this.grant = grant;
    this.deadline = monotonicNow();
    this.leaseMs = 0;
    observer.began?.(this);
  }

  get active(): boolean {
    return this.state === 'held';
  }

  /** What a call on this hold throws once it is no longer held: its loss, or that it was released. */
  endedError(): LockLostError | IllegalMonitorStateError {
    return this.lostError ?? new IllegalMonitorStateError(`"${this.name}" is no longer held: it was released`);
  }

  /**
   * Held and before its deadline (and cap), checked against the clock, so a
   * timer that fires late never leaves a hold looking alive past its deadline.
   */
  get certain(): boolean {
    return this.active && monotonicNow() < this.deadline && !(this.maxLeaseAt !== undefined && monotonicNow() >= this.maxLeaseAt);
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      // Someone can observe the fixed lease's end now: report it on time.
      if (this.active && !this.renewed && this.count > 0) this.armExpiryTimer();
    }
    if (this.lostError && !this.controller.signal.aborted) this.controller.abort(this.lostError);
    return this.controller.signal;
  }

  /** True while any acquisition in the stack was taken without a fixed lease. */
  get renewed(): boolean {
    return this.watchdogFlags.includes(true);
  }

  /** The fixed lease has run out (lease − drift since its send): whatever a timer said, it may be gone. */
  get expired(): boolean {
    return this.active && !this.renewed && monotonicNow() >= this.deadline;
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

  // After every acquisition or release, so a reentry racing the last release
  // restarts renewal. A fixed lease's end is timed only when observable (the
  // signal, a lockLost listener); else the next release or read finds it `expired`.
  private applyLeaseMode(): void {
    if (this.renewed) {
      this.clearExpiryTimer();
      if (!this.renewing) {
        this.renewing = true;
        this.observer.startRenewal(this);
      }
      return;
    }
    this.stopRenewing();
    if (this.controller || this.observer.watchesLosses()) this.armExpiryTimer();
  }

  private stopRenewing(): void {
    if (!this.renewing) return;
    this.renewing = false;
    this.observer.stopRenewal(this);
  }

  /**
   * The final release is about to go out: stop renewing, so a renewal racing it
   * cannot come back "gone" and report a clean release as lost. No way back.
   */
  beginFinalRelease(): void {
    this.releaseSent = true;
    this.stopRenewing();
  }

  /**
   * An extension to `leaseMs` sent at `sentAt` succeeded: the lease (and what
   * the watchdog renews to) becomes the longer of the two, the deadline too.
   */
  extendTo(sentAt: number, leaseMs: number): void {
    if (!this.active) return;
    this.leaseMs = Math.max(this.leaseMs, leaseMs);
    this.deadline = Math.max(this.deadline, leaseDeadline(sentAt, leaseMs, this.driftFactor));
    if (!this.renewed && this.expiryTimer !== undefined) this.armExpiryTimer();
  }

  /** A renewal sent at `sentAt` succeeded. */
  extend(sentAt: number): void {
    if (!this.active) return;
    this.deadline = Math.max(this.deadline, leaseDeadline(sentAt, this.leaseMs, this.driftFactor));
  }

  /**
   * Caps the hold at monotonic time `at` (`maxLeaseMs` from the send; the
   * earliest cap wins), where it is lost (`maxLease`). The watchdog also checks
   * the cap before each renewal, so a late timer never lets one through past it.
   */
  capLease(at: number): void {
    if (!this.active || (this.maxLeaseAt !== undefined && this.maxLeaseAt <= at)) return;
    this.maxLeaseAt = at;
    if (this.maxLeaseTimer !== undefined) clearTimeout(this.maxLeaseTimer);
    this.maxLeaseTimer = setTimeout(() => this.lose('maxLease'), Math.max(0, Math.ceil(at - monotonicNow())));
    // Must not keep the process alive, as the expiry timer.
    this.maxLeaseTimer.unref();
  }

  lose(reason: LockLostReason, cause?: unknown, detail?: string): void {
    if (!this.active) return;
    const error = new LockLostError(this.name, reason, { cause, detail });
    this.lostError = error;
    this.finish('lost');
    this.controller?.abort(error);
    this.observer.lost(this, error);
  }

  private finish(state: HoldState): void {
    const wasHeld = this.state === 'held';
    this.state = state;
    if (wasHeld) this.observer.ended?.(this);
    this.clearExpiryTimer();
    if (this.maxLeaseTimer !== undefined) clearTimeout(this.maxLeaseTimer);
    this.stopRenewing();
  }

  // A fixed lease is never renewed: its signal aborts at its deadline.
  private armExpiryTimer(): void {
    this.clearExpiryTimer();
    const delay = Math.max(0, Math.ceil(this.deadline - monotonicNow()));
    this.expiryTimer = setTimeout(() => this.lose('expired'), delay);
    this.expiryTimer.unref();
  }

  private clearExpiryTimer(): void {
    if (this.expiryTimer === undefined) return;
    clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
  }
}
