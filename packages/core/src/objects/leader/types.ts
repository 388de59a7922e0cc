import type { LockLostError, LockLostReason } from '../../errors.js';

/** Options of `election.elect()`. */
export interface ElectOptions {
  /** How long to wait for leadership, in ms (0: try once); then LockAcquireTimeoutError. @default undefined (without limit) */
  readonly waitMs?: number;
  /** Aborts the wait; `elect()` rejects with `signal.reason`. @default undefined */
  readonly signal?: AbortSignal;
}

/** Options of `election.lead(fn, options)`. */
export interface LeadOptions {
  /** Stops leading for good: `fn`'s signal aborts, leadership is given up, `lead()` rejects. @default undefined (until close or `fn` throws) */
  readonly signal?: AbortSignal;
}

/** What `lead(fn)` hands to `fn` for one term of leadership. */
export interface LeadershipScope {
  /** Aborts when this term ends: leadership lost (a LockLostError), or the caller's signal aborted. */
  readonly signal: AbortSignal;
  /** The term's epoch (its fencing token): larger than every earlier leader's. */
  readonly epoch: string;
}

/** One term of leadership from `elect()`: held until `resign()` (or the `await using` scope's end), or lost, which aborts `signal`. */
export interface Leadership extends AsyncDisposable {
  /** The election's name. */
  readonly name: string;
  /** The leader's owner id (`<clientId>:<taskId>`), as `currentLeader()` reports it. */
  readonly owner: string;
  /** The term's epoch (its fencing token, growing with every leader): have writes refuse older ones, as a paused leader may think it leads. */
  readonly epoch: string;
  /** Aborts with a LockLostError (reason on it) the moment leadership is known lost. */
  readonly signal: AbortSignal;
  /** True until leadership is lost or resigned (as this process knows it). */
  readonly isLeader: boolean;
  /**
   * Gives leadership up (releases the lock); idempotent.
   * @throws RedisUnavailableError when the release did not reach Redis (finished in the background; leadership is over anyway)
   */
  resign(): Promise<void>;
}

/** The current leader, as Redis has it. */
export interface LeaderInfo {
  /** The leader's owner id `<clientId>:<taskId>` (see {@link Leadership.owner}). */
  readonly owner: string;
  /** Its epoch (fencing token). */
  readonly epoch: string;
  /** Its lease left in ms (renewed by its watchdog while it lives). */
  readonly ttlMs: number;
}

/** A change of this process's leadership. */
export interface LeadershipEvent {
  /** The election's name. */
  readonly name: string;
  /** This candidate's owner id. */
  readonly owner: string;
  /** The term's epoch. */
  readonly epoch: string;
}

/** Leadership was lost (not resigned). */
export interface LeadershipLostEvent extends LeadershipEvent {
  /** Why: `unreachable` (not renewed in time: a stalled process, Redis out of reach), `taken`, `forced`, `expired`, `closed`, `maxLease`. */
  readonly reason: LockLostReason;
  /** The error the term's signal aborted with. */
  readonly error: LockLostError;
}

/** Typed events of a {@link LeaderElection} (eventemitter3). */
export interface LeaderElectionEvents {
  /** This process became leader. */
  elected: (event: LeadershipEvent) => void;
  /** This process's leadership was lost. */
  lost: (event: LeadershipLostEvent) => void;
  /** This process gave leadership up. */
  resigned: (event: LeadershipEvent) => void;
  /** A listener of the events above threw (the election goes on). */
  error: (error: Error) => void;
}
