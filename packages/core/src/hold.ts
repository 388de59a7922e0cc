import { LockLostError, type LockLostReason } from './errors.js';
import type { LockKeys } from './lock-keys.js';
import type { RenewableHold } from './lease-renewal.js';
import { leaseDeadline, monotonicNow } from './lease-deadline.js';

/** How a hold reports what happens to it; the client turns these into events and renewal. */
export interface HoldObserver {
  startRenewal(hold: Hold): void;
  stopRenewal(hold: Hold): void;
  lost(hold: Hold, error: LockLostError): void;
}

export type HoldState = 'held' | 'released' | 'lost';

/**
 * What one owner holds of one lock: every nested acquisition shares this hold's
 * lease, deadline, token and signal (DESIGN: the TTL only grows). `count` mirrors
 * the owner's hold count in Redis; `watchdogDepths` remembers, per acquisition
 * still held, whether it was taken without a fixed lease, because the watchdog
 * runs while any of them was.
 */
export class Hold implements RenewableHold {
  state: HoldState = 'held';
  count = 0;
  deadline: number;
  leaseMs: number;
  lostError: LockLostError | undefined;
  /** An older generation of this owner's hold that was lost while counts were outstanding. */
  previous: Hold | undefined;
  private readonly watchdogFlags: boolean[] = [];
  // Made on first use: an AbortController costs several µs, and Java-style
  // lock()/unlock() callers never look at the signal.
  private controller: AbortController | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly name: string,
    readonly keys: LockKeys,
    readonly owner: string,
    readonly token: string,
    private readonly watchdogLeaseMs: number,
    private readonly observer: HoldObserver,
  ) {
    this.deadline = monotonicNow();
    this.leaseMs = watchdogLeaseMs;
  }

  get key(): string {
    return this.keys.lock;
  }

  get active(): boolean {
    return this.state === 'held';
  }

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.lostError && !this.controller.signal.aborted) this.controller.abort(this.lostError);
    return this.controller.signal;
  }

  get renewed(): boolean {
    return this.watchdogFlags.includes(true);
  }

  /**
   * Records one granted acquisition. `leaseMs` undefined means a watchdog lease.
   * The deadline only grows, as the server's TTL does.
   */
  acquired(count: number, sentAt: number, leaseMs: number | undefined): void {
    this.count = count;
    this.watchdogFlags.push(leaseMs === undefined);
    this.deadline = Math.max(this.deadline, leaseDeadline(sentAt, leaseMs ?? this.watchdogLeaseMs));
    this.leaseMs = Math.max(this.leaseMs, leaseMs ?? this.watchdogLeaseMs);
    this.applyLeaseMode();
  }

  /** Records one release that left `remaining` counts in Redis. */
  releasedOne(remaining: number): void {
    this.watchdogFlags.pop();
    this.count = remaining;
    if (remaining <= 0) {
      this.finish('released');
      return;
    }
    this.applyLeaseMode();
  }

  // After every reply, not only on a change: a reentrant acquire racing what
  // looked like the last release (renewal already stopped) must restart renewal.
  // Adding a hold the renewer already has is a no-op.
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
   * clean release as a loss. {@link resumeAfterFailedRelease} undoes it.
   */
  beginFinalRelease(): void {
    if (this.renewed) this.observer.stopRenewal(this);
  }

  /** The final release failed (Redis unavailable): the hold stands, keep renewing it. */
  resumeAfterFailedRelease(): void {
    if (this.active && this.renewed) this.observer.startRenewal(this);
  }

  /** A renewal sent at `sentAt` succeeded. */
  extend(sentAt: number): void {
    if (!this.active) return;
    this.deadline = Math.max(this.deadline, leaseDeadline(sentAt, this.leaseMs));
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
