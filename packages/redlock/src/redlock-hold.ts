import { LockLostError, monotonicNow, type LockKeys, type LockLostReason, type RenewableHold } from '@org/rlock-core';
import { redlockDeadline } from './quorum.js';

/** How a hold reports what happens to it; the client turns these into events and renewal. */
export interface RedlockHoldObserver {
  startRenewal(hold: RedlockHold): void;
  stopRenewal(hold: RedlockHold): void;
  lost(hold: RedlockHold, error: LockLostError): void;
}

export type RedlockHoldState = 'held' | 'released' | 'lost';

/**
 * What one owner holds of one Redlock lock. Reentrancy is counted here, in the
 * client: the masters see one acquisition (count 1) whatever `count` is, so
 * only the first acquire and the last release reach them. Nested acquisitions
 * share this hold's lease, deadline and signal (the lease only grows);
 * `watchdogFlags` remembers, per acquisition still held, whether it was taken
 * without a fixed lease, because the watchdog runs while any of them was.
 *
 * `tokens[i]` is the token master i gave this hold (each master mints its own,
 * from its own clock), kept only to check ownership when renewing and
 * releasing there; undefined where the master did not grant it (or it was
 * released there). None of them is a fencing token: see the README.
 */
export class RedlockHold implements RenewableHold {
  state: RedlockHoldState = 'held';
  count = 0;
  deadline: number;
  leaseMs: number;
  lostError: LockLostError | undefined;
  /** An older generation of this owner's hold that was lost while counts were outstanding. */
  previous: RedlockHold | undefined;
  /**
   * The final release went out: from then on the release itself clears what is
   * left on the masters (retried in the background), whatever happens to the hold.
   */
  releaseSent = false;
  /** Fencing token: none on Redlock. */
  readonly token = undefined;
  private readonly watchdogFlags: boolean[] = [];
  private readonly controller = new AbortController();
  private expiryTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly name: string,
    readonly keys: LockKeys,
    readonly owner: string,
    readonly tokens: (string | undefined)[],
    private readonly watchdogLeaseMs: number,
    private readonly driftFactor: number,
    private readonly observer: RedlockHoldObserver,
  ) {
    this.deadline = monotonicNow();
    this.leaseMs = 0;
  }

  get key(): string {
    return this.keys.lock;
  }

  get active(): boolean {
    return this.state === 'held';
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** True while any acquisition in the stack was taken without a fixed lease. */
  get renewed(): boolean {
    return this.watchdogFlags.includes(true);
  }

  /** Masters where this hold has a grant. */
  get holdingMasters(): number[] {
    const result: number[] = [];
    this.tokens.forEach((token, index) => {
      if (token !== undefined) result.push(index);
    });
    return result;
  }

  /**
   * Records one acquisition. `leaseMs` undefined means a watchdog lease.
   * `sentAt` is when the round (or lease extension) that set the lease was sent,
   * undefined for a nested acquisition that did not reach the masters.
   */
  acquired(sentAt: number | undefined, leaseMs: number | undefined): void {
    const wasRenewed = this.renewed;
    const lease = leaseMs ?? this.watchdogLeaseMs;
    this.count++;
    this.watchdogFlags.push(leaseMs === undefined);
    if (sentAt !== undefined) this.deadline = Math.max(this.deadline, redlockDeadline(sentAt, lease, this.driftFactor));
    this.leaseMs = Math.max(this.leaseMs, lease);
    if (this.renewed && !wasRenewed) {
      this.clearExpiryTimer();
      this.observer.startRenewal(this);
    } else if (!this.renewed) {
      this.armExpiryTimer();
    }
  }

  /** One release; `count` reaching 0 means the hold is gone from the masters. */
  releasedOne(): void {
    this.watchdogFlags.pop();
    this.count--;
    if (this.count <= 0) {
      this.finish('released');
      return;
    }
    if (!this.renewed) {
      this.observer.stopRenewal(this);
      this.armExpiryTimer();
    }
  }

  /**
   * The final release is about to go out: stop renewing, so a renewal racing it
   * cannot report a clean release as a loss. There is no way back: once a
   * release may have run on some master, the hold is released or lost.
   */
  beginFinalRelease(): void {
    this.releaseSent = true;
    if (this.renewed) this.observer.stopRenewal(this);
  }

  /**
   * True while the hold is held and its deadline (the end of the lease certain
   * on a majority) has not passed: what a nested acquisition counted in the
   * client, or a read of the current task's hold, may rely on. A timer that
   * fires late must not leave a hold looking alive past its deadline.
   */
  get certain(): boolean {
    return this.active && monotonicNow() < this.deadline;
  }

  /** A renewal sent at `sentAt` kept the lease on a majority. */
  extend(sentAt: number): void {
    if (!this.active) return;
    this.deadline = Math.max(this.deadline, redlockDeadline(sentAt, this.leaseMs, this.driftFactor));
  }

  lose(reason: LockLostReason, cause?: unknown): void {
    if (!this.active) return;
    const error = new LockLostError(this.name, reason, { cause });
    this.lostError = error;
    this.finish('lost');
    this.controller.abort(error);
    this.observer.lost(this, error);
  }

  private finish(state: RedlockHoldState): void {
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
