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
  /** A fixed lease nobody watches (no expiry timer) runs until the hold's deadline: its end must still be found. */
  lapses?(hold: Hold): void;
}

export type HoldState = 'held' | 'released' | 'lost';

/** Who holds what: the hold an acquisition creates or reenters, and how its lease is counted (data, so one Hold serves every object). */
export interface HoldTarget {
  readonly name: string;
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

/** What only some holds need: made on first use, so a plain hold carries one empty field for all of it. */
interface RareHoldState<G> {
  /** What the store granted beyond the token (a Redlock's per-master grants, a fair lock's hand-off mark). */
  grant?: G | undefined;
  lostError?: LockLostError;
  previous?: Hold<G>;
  maxLeaseAt?: number;
  maxLeaseTimer?: NodeJS.Timeout;
  expiryTimer?: NodeJS.Timeout;
  // Made on first read of `signal`: an AbortController is costly, and lock()/unlock() callers never look at it.
  controller?: AbortController;
  /** Watchdog flags of the acquisitions past the first FLAG_BITS (a deeper reentry). */
  deepFlags?: boolean[];
}

/** Watchdog flags kept in `bits` (deeper go to an array): with the marker at bit 29, `bits` stays a small integer on every V8 build. */
const FLAG_BITS = 25;

/** What every hold of one kind and mode on one client shares: one object, not five fields per hold. */
interface HoldSite {
  readonly kind: string;
  readonly mode: string;
  readonly driftFactor: number;
  readonly observer: HoldObserver;
}

/** A client has a few kinds and modes; past this many sites, holds get one of their own. */
const MAX_SITES = 64;

/** The sites of one client's holds, and how they are told of renewal and losses: one per client. */
export class HoldSites {
  private readonly sites: HoldSite[] = [];

  constructor(private readonly observer: HoldObserver) {}

  /** The site of `target`'s holds, shared with every hold of its kind, mode and drift. */
  of(target: HoldTarget): HoldSite {
    for (const site of this.sites) {
      if (site.kind === target.kind && site.mode === target.mode && site.driftFactor === target.driftFactor) return site;
    }
    const site: HoldSite = {
      kind: target.kind,
      mode: target.mode,
      driftFactor: target.driftFactor,
      observer: this.observer,
    };
    if (this.sites.length < MAX_SITES) this.sites.push(site);
    return site;
  }
}

const RELEASE_SENT = 1;
const RENEWING = 2;
const RELEASED = 4;
const LOST = 8;
const STATE_MASK = 15;
/** Above the state, the watchdog-flag stack: a marker bit over one bit per acquisition (newest lowest; 1: no fixed lease). */
const STACK_SHIFT = 4;
const EMPTY_STACK = 1;

/**
 * What one owner holds of one object in one mode: nested acquisitions share its lease, deadline, token and signal; renewal
 * runs while any took a watchdog lease. What most holds never use (a loss, a cap, timers, the signal) lives in `rare`.
 */
export class Hold<G = unknown> implements RenewableHold {
  readonly name: string;
  readonly key: string;
  readonly owner: string;
  readonly token: string | undefined;
  count = 0;
  /** Monotonic ms until which the lease is certain, floored: an integer is stored in the object, a fraction boxed. */
  deadline: number;
  leaseMs = 0;
  /** Acquisitions a scope (withLock) or a handle releases itself: a bare unlock() may not take the count below them. */
  scoped = 0;
  /** Its renewer's slot (see RenewableHold). */
  renewal: unknown = undefined;
  /** RELEASE_SENT, RENEWING, RELEASED, LOST (the state needs no field), then the watchdog-flag stack (see STACK_SHIFT). */
  private bits = EMPTY_STACK << STACK_SHIFT;

  private readonly site: HoldSite;
  private rare: RareHoldState<G> | undefined;

  constructor(
    target: HoldTarget,
    /** Fencing token of the hold (undefined where there is none, as on Redlock). */
    token: string | undefined,
    /** Its client's hold sites: the lease without a fixed one, and who is told of renewal and losses. */
    sites: HoldSites,
    grant: G | undefined,
  ) {
    this.name = target.name;
    this.key = target.key;
    this.owner = target.owner;
    this.token = token;
    this.site = sites.of(target);
    this.deadline = Math.floor(monotonicNow());
    if (grant !== undefined) this.extra.grant = grant;
    this.site.observer.began?.(this);
  }

  get state(): HoldState {
    return (this.bits & LOST) !== 0 ? 'lost' : (this.bits & RELEASED) !== 0 ? 'released' : 'held';
  }

  /** What the store granted beyond the token (in `rare`: a plain lock has none). */
  get grant(): G | undefined {
    return this.rare?.grant;
  }

  /** The mode held ('' for an exclusive lock; 'read', 'write'…). */
  get mode(): string {
    return this.site.mode;
  }

  /** Renewal kind (see HoldKinds). */
  get kind(): string {
    return this.site.kind;
  }

  /** The release that takes the count to 0 went out: from then on it is released or lost, never held again. */
  get releaseSent(): boolean {
    return (this.bits & RELEASE_SENT) !== 0;
  }

  private get extra(): RareHoldState<G> {
    return (this.rare ??= {});
  }

  get lostError(): LockLostError | undefined {
    return this.rare?.lostError;
  }

  /** An older generation of this owner's hold that was lost while counts were outstanding. */
  get previous(): Hold<G> | undefined {
    return this.rare?.previous;
  }

  set previous(hold: Hold<G> | undefined) {
    if (hold !== undefined || this.rare !== undefined) this.extra.previous = hold;
  }

  /** Monotonic ms past which the hold is lost (`maxLease`) instead of renewed or relied on; undefined: no cap. */
  get maxLeaseAt(): number | undefined {
    return this.rare?.maxLeaseAt;
  }

  get active(): boolean {
    return (this.bits & (RELEASED | LOST)) === 0;
  }

  /** What a call on this hold throws once it is no longer held: its loss, or that it was released. */
  endedError(): LockLostError | IllegalMonitorStateError {
    return this.lostError ?? new IllegalMonitorStateError(`"${this.name}" is no longer held: it was released`);
  }

  /** Held and before its deadline and cap, by the clock: a late timer never leaves a hold looking alive. */
  get certain(): boolean {
    const maxLeaseAt = this.rare?.maxLeaseAt;
    return this.active && monotonicNow() < this.deadline && !(maxLeaseAt !== undefined && monotonicNow() >= maxLeaseAt);
  }

  get signal(): AbortSignal {
    const extra = this.extra;
    if (!extra.controller) {
      extra.controller = new AbortController();
      // Someone can observe the fixed lease's end now: report it on time.
      if (this.active && !this.renewed && this.count > 0) this.armExpiryTimer();
    }
    if (extra.lostError && !extra.controller.signal.aborted) extra.controller.abort(extra.lostError);
    return extra.controller.signal;
  }

  /** True while any acquisition in the stack was taken without a fixed lease. */
  get renewed(): boolean {
    const stack = this.bits >>> STACK_SHIFT;
    // Any flag set below the marker: the stack is not a power of two.
    return (stack & (stack - 1)) !== 0 || this.rare?.deepFlags?.includes(true) === true;
  }

  /** The fixed lease has run out (lease − drift since its send): whatever a timer said, it may be gone. */
  get expired(): boolean {
    return this.active && !this.renewed && monotonicNow() >= this.deadline;
  }

  /**
   * One granted acquisition of a lease of `leaseMs` (`renewed`: the watchdog's) leaving the owner's count at `count`; `sentAt`
   * undefined: it did not reach Redis. The deadline only grows, as the server's TTL does.
   */
  acquired(count: number, sentAt: number | undefined, leaseMs: number, renewed: boolean): void {
    this.count = count;
    this.pushFlag(renewed);
    if (sentAt !== undefined) this.deadline = Math.max(this.deadline, Math.floor(leaseDeadline(sentAt, leaseMs, this.site.driftFactor)));
    this.leaseMs = Math.max(this.leaseMs, leaseMs);
    this.applyLeaseMode();
  }

  /** Records one release that left `remaining` counts. */
  releasedOne(remaining: number): void {
    this.popFlag();
    this.count = remaining;
    if (remaining <= 0) {
      this.finish(RELEASED);
      return;
    }
    this.applyLeaseMode();
  }

  private pushFlag(watchdog: boolean): void {
    const stack = this.bits >>> STACK_SHIFT;
    // Full (FLAG_BITS flags under the marker): deeper ones go to the array.
    if (stack >= 1 << FLAG_BITS) (this.extra.deepFlags ??= []).push(watchdog);
    else this.bits = (this.bits & STATE_MASK) | (((stack << 1) | (watchdog ? 1 : 0)) << STACK_SHIFT);
  }

  private popFlag(): void {
    // The deepest flags first (a flag is a boolean: undefined is an empty array).
    if (this.rare?.deepFlags?.pop() !== undefined) return;
    const stack = this.bits >>> STACK_SHIFT;
    if (stack === EMPTY_STACK) return;
    this.bits = (this.bits & STATE_MASK) | ((stack >>> 1) << STACK_SHIFT);
  }

  // After every acquisition or release, so a reentry racing the last release restarts renewal. A fixed lease's end is
  // timed per hold only when observable (the signal, a lockLost listener); else the client's one lapse check finds it.
  private applyLeaseMode(): void {
    if (this.renewed) {
      this.clearExpiryTimer();
      if ((this.bits & RENEWING) === 0) {
        this.bits |= RENEWING;
        this.site.observer.startRenewal(this);
      }
      return;
    }
    this.stopRenewing();
    if (this.rare?.controller || this.site.observer.watchesLosses()) this.armExpiryTimer();
    else this.site.observer.lapses?.(this);
  }

  private stopRenewing(): void {
    if ((this.bits & RENEWING) === 0) return;
    this.bits &= ~RENEWING;
    this.site.observer.stopRenewal(this);
  }

  /** Stops renewing for good, so a renewal racing the final release cannot come back "gone" and report it as lost. */
  beginFinalRelease(): void {
    this.bits |= RELEASE_SENT;
    this.stopRenewing();
  }

  /** An extension sent at `sentAt` succeeded: the lease (what the watchdog renews to) and deadline take the longer. */
  extendTo(sentAt: number, leaseMs: number): void {
    if (!this.active) return;
    this.leaseMs = Math.max(this.leaseMs, leaseMs);
    this.deadline = Math.max(this.deadline, Math.floor(leaseDeadline(sentAt, leaseMs, this.site.driftFactor)));
    if (!this.renewed && this.rare?.expiryTimer !== undefined) this.armExpiryTimer();
  }

  /** A renewal sent at `sentAt` succeeded. */
  extend(sentAt: number): void {
    if (!this.active) return;
    this.deadline = Math.max(this.deadline, Math.floor(leaseDeadline(sentAt, this.leaseMs, this.site.driftFactor)));
  }

  /** Lost (`maxLease`) at monotonic `at`, the earliest cap winning; the watchdog checks the cap too, so a late timer lets no renewal past it. */
  capLease(at: number): void {
    if (!this.active || (this.maxLeaseAt !== undefined && this.maxLeaseAt <= at)) return;
    const extra = this.extra;
    extra.maxLeaseAt = at;
    if (extra.maxLeaseTimer !== undefined) clearTimeout(extra.maxLeaseTimer);
    // Must not keep the process alive, as the expiry timer.
    extra.maxLeaseTimer = setTimeout(() => this.lose('maxLease'), Math.max(0, Math.ceil(at - monotonicNow()))).unref();
  }

  lose(reason: LockLostReason, cause?: unknown, detail?: string): void {
    if (!this.active) return;
    const error = new LockLostError(this.name, reason, { cause, detail });
    this.extra.lostError = error;
    this.finish(LOST);
    this.rare?.controller?.abort(error);
    this.site.observer.lost(this, error);
  }

  private finish(state: typeof LOST | typeof RELEASED): void {
    const wasHeld = this.active;
    this.bits |= state;
    if (wasHeld) this.site.observer.ended?.(this);
    this.clearExpiryTimer();
    if (this.rare?.maxLeaseTimer !== undefined) clearTimeout(this.rare.maxLeaseTimer);
    this.stopRenewing();
  }

  // A fixed lease is never renewed: its signal aborts at its deadline.
  private armExpiryTimer(): void {
    this.clearExpiryTimer();
    const delay = Math.max(0, Math.ceil(this.deadline - monotonicNow()));
    this.extra.expiryTimer = setTimeout(() => this.lose('expired'), delay).unref();
  }

  private clearExpiryTimer(): void {
    const rare = this.rare;
    if (rare?.expiryTimer === undefined) return;
    clearTimeout(rare.expiryTimer);
    rare.expiryTimer = undefined;
  }
}
