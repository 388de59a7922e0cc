import { ClientClosedError, type LockLostError, type TimeoutHolder } from '../errors.js';
import { BackgroundWork } from './background-work.js';
import { HoldSites, type Hold } from './hold.js';
import { HoldKinds } from './hold-kinds.js';
import { HoldRegistry } from './hold-registry.js';
import { OwnerChains } from './owner-chains.js';
import type { LeaseRenewer } from './renewal.js';
import type { WaitQueues } from './wait-queue.js';
import { Telemetry } from '../observability/telemetry.js';
import { monotonicNow } from '../connection/time.js';

/** How the context reports to its client (the client turns these into events). */
export interface ContextReports {
  /** True when the client has `lockLost` listeners. */
  watchesLosses(): boolean;
  acquired(hold: Hold): void;
  released(hold: Hold, via: 'unlock' | 'retry' | 'expiry'): void;
  lost(hold: Hold, error: LockLostError): void;
  backgroundError(error: unknown): void;
  /** A hold is held now / no longer: counted by the client (keep-alive, leak checks). */
  began?(hold: Hold): void;
  ended?(hold: Hold): void;
  /** An acquisition call started / settled: work in progress (keep-alive). */
  callStarted?(): void;
  callEnded?(): void;
}

export interface ContextSettings {
  readonly clientId: string;
  readonly keyPrefix: string;
  readonly watchdogTimeoutMs: number;
  readonly commandTimeoutMs: number;
  /** Metrics, traces and diagnostics channels (see engine/acquire.ts). @default one without `metricName` */
  readonly telemetry?: Telemetry;
}

/** What every object of one client shares (holds, chains, queues, kinds, renewer, state): all they need of it. */
export class EngineContext {
  readonly clientId: string;
  readonly keyPrefix: string;
  readonly watchdogTimeoutMs: number;
  readonly commandTimeoutMs: number;
  /** Longest sleep of a waiter between tries: a lost release message costs at most this. */
  readonly maxSleepMs: number;
  readonly holds = new HoldRegistry();
  readonly chains = new OwnerChains();
  readonly background = new BackgroundWork();
  /** The client's kinds of hold, and its renewal backend. */
  readonly kinds: HoldKinds;
  readonly holdSites: HoldSites;
  readonly telemetry: Telemetry;
  renewer: LeaseRenewer | undefined;
  /** Whether Redis still has `hold` as its owner's with its token: undefined when it could not tell (no answer); bounded, never rejects. */
  holdInRedis: ((hold: Hold) => Promise<'held' | 'gone' | 'taken' | undefined>) | undefined;
  /** Subscribes the client's notice channel if it is not: settles (never rejects) once acknowledged or failed; undefined once heard. */
  noticesReady: (() => Promise<void> | undefined) | undefined;
  /** Who holds `name`, for a LockAcquireTimeoutError (only after a wait ran out); bounded, never rejects. */
  holderOf: ((name: string) => Promise<TimeoutHolder | undefined>) | undefined;
  closed = false;
  private opCounter = 0;
  /** When (monotonic ms) the lapse check next runs; infinite while none is due. */
  private lapseCheckAt = Number.POSITIVE_INFINITY;
  private lapseTimer: NodeJS.Timeout | undefined;
  /** Holds whose check with Redis is out: a burst of messages about one hold costs one read. */
  private readonly checking = new WeakSet<Hold>();
  private readonly states = new Map<abstract new (...args: never[]) => unknown, unknown>();

  constructor(
    settings: ContextSettings,
    readonly queues: WaitQueues,
    /** The client's ears: what the engine tells it (forwarded by the methods below where objects tell it too). */
    readonly reports: ContextReports,
  ) {
    this.clientId = settings.clientId;
    this.keyPrefix = settings.keyPrefix;
    this.watchdogTimeoutMs = settings.watchdogTimeoutMs;
    this.commandTimeoutMs = settings.commandTimeoutMs;
    this.maxSleepMs = Math.max(1, Math.floor(settings.watchdogTimeoutMs / 3));
    this.telemetry = settings.telemetry ?? new Telemetry(undefined);
    this.kinds = new HoldKinds(this.telemetry);
    this.holdSites = new HoldSites({
      startRenewal: (hold) => this.renewer?.add(hold),
      stopRenewal: (hold) => this.renewer?.remove(hold),
      lost: (hold, error) => this.onLost(hold, error),
      watchesLosses: () => reports.watchesLosses(),
      began: (hold) => reports.began?.(hold),
      ended: (hold) => reports.ended?.(hold),
      lapses: (hold) => {
        if (hold.deadline < this.lapseCheckAt) this.checkLapsesAt(hold.deadline);
      },
    });
  }

  /** False for a client without a renewer: it takes fixed leases only. */
  get canRenew(): boolean {
    return this.renewer !== undefined;
  }

  assertOpen(): void {
    if (this.closed) throw new ClientClosedError();
  }

  /** The scripts recognise a replayed or late call by its op id, qualified by the owner: a per-client counter is unique. */
  newOpId(): string {
    return (++this.opCounter).toString(36);
  }

  /** This client's one instance of `kind`'s state, made by `create` on first use. */
  stateOf<T>(kind: abstract new (...args: never[]) => T, create: () => T): T {
    if (!this.states.has(kind)) this.states.set(kind, create());
    return this.states.get(kind) as T;
  }

  acquired(hold: Hold): void {
    this.reports.acquired(hold);
  }

  /**
   * A force-unlock notice names the hold of `owner` on `key` with `token` (a newer token is another hold). A notice is a hint
   * anyone who may PUBLISH can forge: the hold ends (`forced`) only once Redis says it is gone or another's (no answer: nothing).
   */
  forced(key: string, owner: string, token: string): void {
    const read = this.holdInRedis;
    for (const hold of this.holds.holdsOf(key)) {
      // A burst of notices about one hold costs one read.
      if (read === undefined || hold.owner !== owner || hold.token !== token || !hold.active || hold.releaseSent || this.checking.has(hold)) continue;
      this.checking.add(hold);
      const checked = read(hold).then((found) => {
        this.checking.delete(hold);
        if (found === undefined || found === 'held' || !hold.active || hold.releaseSent) return;
        hold.lose('forced');
      });
      this.background.track(checked);
    }
  }

  /**
   * One timer per client, not one per hold (a lock/unlock pair would pay for a timer): it runs at the earliest deadline
   * of a fixed lease nobody watches and loses the holds past theirs (`expired`), so a forgotten hold ends, and no longer
   * keeps the process alive, soon after its lease lapsed. Unref'd: while such a hold is held, its connections keep the loop.
   */
  private checkLapsesAt(at: number): void {
    if (this.lapseTimer !== undefined) clearTimeout(this.lapseTimer);
    this.lapseCheckAt = at;
    this.lapseTimer = setTimeout(this.checkLapses, Math.max(1, Math.ceil(at - monotonicNow()))).unref();
  }

  private readonly checkLapses = (): void => {
    this.lapseTimer = undefined;
    this.lapseCheckAt = Number.POSITIVE_INFINITY;
    if (this.closed) return;
    let next = Number.POSITIVE_INFINITY;
    for (const hold of this.holds.all()) {
      // A final release on its way settles the hold itself.
      if (!hold.active || hold.renewed || hold.releaseSent) continue;
      if (hold.expired) hold.lose('expired');
      else next = Math.min(next, hold.deadline);
    }
    if (next !== Number.POSITIVE_INFINITY) this.checkLapsesAt(next);
  };

  /** A failure in the background: reported as an `error` event, never thrown. */
  backgroundError(error: unknown): void {
    this.reports.backgroundError(error);
  }

  private onLost(hold: Hold, error: LockLostError): void {
    this.reports.lost(hold, error);
    // Clear what is left (by owner and token, never a newer hold) so waiters
    // need not sit out its TTL; a final release in flight finishes it itself.
    if (error.reason === 'closed' || error.reason === 'forced' || hold.releaseSent || this.closed) return;
    const kind = this.kinds.get(hold.kind);
    this.background.track(this.chains.run(hold.key, hold.owner, () => kind.clear(hold)).catch((clearError: unknown) => this.backgroundError(clearError)));
  }
}
