import { InvalidArgumentError, RedisUnavailableError } from '@org/rlock-core';
import { backoffDelayMs, type LeaseRenewer, type LostReason, type RenewableHold, type RenewalBackend, type RenewalReporter } from '@org/rlock-core/internal';
import { DueQueue, type DueItem } from './due-queue.js';
import { MAX_TIMER_DELAY_MS, resolveWatchdogOptions, type ResolvedWatchdogOptions, type WatchdogOptions } from './watchdog-options.js';

/**
 * One tracked hold. It sits in the due queue for its whole life, keyed by when
 * it next needs attention. Its times are whole ms (renewals rounded earlier,
 * deadline checks later): small integers stay in the object, where a fraction
 * takes a 16 B number box of its own, two per held lock. There is one per
 * renewed hold, so what only failures need is one field, set when one happens.
 */
interface Entry extends DueItem {
  readonly hold: RenewableHold;
  /** The watchdog tracking it: a hold's renewer slot is one watchdog's. */
  readonly watchdog: Watchdog;
  /**
   * WAITING (−1): queued at min(renewAt, hold.deadline) for its next renewal.
   * Else a renew call for it is out, sent by a tick this many ms late (0 when
   * on time); it is queued at hold.deadline, so the deadline check fires on
   * time even if that call hangs.
   */
  sentLateMs: number;
  /** When the next renewal (or retry) is due, monotonic ms. */
  renewAt: number;
  /** The renew calls that failed since the last success; undefined while none did. */
  failed: Failures | undefined;
}

/** `Entry.sentLateMs` while no renew call for the entry is out. */
const WAITING = -1;

/** What an entry's failed renew calls leave. */
interface Failures {
  /** Failed renew calls since the last success; drives the backoff. */
  readonly count: number;
  /** Why the last one failed, reported as the cause if the hold is lost. */
  readonly error: Error;
}

/** A tick this late (ms) means a blocked event loop, not timer jitter: a hold lost in it says so. */
export const BLOCKED_LOOP_MIN_MS = 50;

/**
 * The renewal scheduler: one unref'd timer renews each hold every
 * `hold.leaseMs / 3`; renewals due in one tick go together, one `renew` call
 * per `batchKey` group of at most `maxBatch` holds, in parallel.
 *
 * A hold is lost when a renewal finds it `expired` or `taken`, or when its
 * deadline passes unrenewed (`unreachable`, detected on time even while a call
 * hangs). A failed call is reported and retried with jittered backoff until
 * the deadline. Nothing thrown in a callback stops the scheduler.
 *
 * @example
 * ```ts
 * const renewer = new Watchdog(backend, reporter, { maxRetryDelayMs: 500 });
 * renewer.add(hold);    // renewed every hold.leaseMs / 3 from now on
 * renewer.remove(hold); // before releasing it: no renewal sent from now on extends it
 * await renewer.close();
 * ```
 */
export class Watchdog implements LeaseRenewer {
  readonly #backend: RenewalBackend;
  readonly #reporter: RenewalReporter;
  readonly #options: ResolvedWatchdogOptions;
  readonly #maxBatch: number;
  readonly #queue = new DueQueue<Entry>();
  readonly #inFlight = new Set<Promise<void>>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When the armed timer fires, monotonic ms; +Infinity when none is armed. */
  #timerAt = Number.POSITIVE_INFINITY;
  #closing: Promise<void> | undefined;
  /** How late (ms) the running tick's timer fired; 0 outside a tick. */
  #tickLateMs = 0;

  /**
   * @param backend how renewals reach Redis; `maxBatch` is read once, here.
   * @param reporter where successful batches and background failures are reported.
   * @throws InvalidArgumentError on a bad option (see {@link WatchdogOptions}),
   * `maxBatch` or backend/reporter method.
   */
  constructor(backend: RenewalBackend, reporter: RenewalReporter, options?: WatchdogOptions) {
    this.#options = resolveWatchdogOptions(options);
    if (typeof backend?.renew !== 'function' || typeof backend.batchKey !== 'function') {
      throw new InvalidArgumentError('Watchdog: backend must have renew() and batchKey() methods');
    }
    if (typeof reporter?.renewed !== 'function' || typeof reporter.error !== 'function') {
      throw new InvalidArgumentError('Watchdog: reporter must have renewed() and error() methods');
    }
    const maxBatch: unknown = backend.maxBatch;
    if (typeof maxBatch !== 'number' || !Number.isSafeInteger(maxBatch) || maxBatch < 1) {
      throw new InvalidArgumentError(`Watchdog: backend.maxBatch must be a positive integer, got ${String(maxBatch)}`);
    }
    this.#backend = backend;
    this.#reporter = reporter;
    this.#maxBatch = maxBatch;
  }

  /**
   * Starts renewing `hold` every `hold.leaseMs / 3`, counted from each
   * successful send. Ignored when tracked already, inactive, or after {@link Watchdog.close}.
   * @throws InvalidArgumentError when `hold.leaseMs` is not a positive finite number.
   */
  add(hold: RenewableHold): void {
    if (this.#closing !== undefined || this.#entryOf(hold) !== undefined || !hold.active) return;
    const now = performance.now();
    const period = periodMs(hold);
    const entry: Entry = {
      hold,
      watchdog: this,
      sentLateMs: WAITING,
      // Sooner when less than two periods of lease are left: one must remain for retries.
      renewAt: Math.floor(Math.max(now, Math.min(now + period, hold.deadline - period))),
      failed: undefined,
      dueAt: 0,
      queueIndex: -1,
    };
    hold.renewal = entry;
    this.#queueNext(entry);
    this.#armTimer();
  }

  /**
   * Stops renewing `hold` at once; the reply of a call already out is ignored.
   * The renew script checks owner and token and never creates a key, so one
   * landing after the release changes nothing.
   */
  remove(hold: RenewableHold): void {
    const entry = this.#entryOf(hold);
    if (entry === undefined) return;
    this.#forget(entry);
    if (this.#queue.size === 0) this.#clearTimer();
  }

  /**
   * Renews every tracked hold now (after a reconnect: a hold the server lost
   * is found before another task of the client is granted the lock).
   */
  renewNow(): void {
    if (this.#closing !== undefined) return;
    const now = performance.now();
    // Every tracked entry is queued outside a tick: the queue is the list.
    for (const entry of [...this.#queue.items()]) {
      if (entry.sentLateMs !== WAITING) continue;
      entry.renewAt = Math.floor(now);
      this.#queueNext(entry);
    }
    this.#armTimer();
  }

  /**
   * Stops the timer and forgets every hold, then resolves once every call in
   * flight has settled. Never rejects; idempotent.
   */
  close(): Promise<void> {
    if (this.#closing === undefined) {
      this.#clearTimer();
      for (const entry of this.#queue.items()) this.#untrack(entry);
      this.#queue.clear();
      this.#closing = this.#drain();
    }
    return this.#closing;
  }

  async #drain(): Promise<void> {
    // Each in-flight promise never rejects and deletes itself when it settles.
    while (this.#inFlight.size > 0) await Promise.allSettled(this.#inFlight);
  }

  readonly #onTimer = (): void => {
    // Measured first: a timer far past due means a stalled event loop, which a hold lost now is blamed on.
    const lateMs = performance.now() - this.#timerAt;
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    this.#tickLateMs = lateMs >= BLOCKED_LOOP_MIN_MS ? lateMs : 0;
    try {
      this.#tick();
    } finally {
      this.#tickLateMs = 0;
    }
  };

  /**
   * Pops the entries due now (or within the coalescing window), loses those
   * past their deadline and renews the rest.
   */
  #tick(): void {
    const due: Entry[] = [];
    const requeue: Entry[] = [];
    try {
      const now = performance.now();
      const horizon = now + this.#options.coalesceWindowMs;
      for (let next = this.#queue.peek(); next !== undefined && next.dueAt <= horizon; next = this.#queue.peek()) {
        this.#queue.pop();
        this.#inspect(next, now, due, requeue);
      }
    } catch (error) {
      this.#reportError(error);
    } finally {
      // Requeued after the loop: one still within the horizon would be popped again and again.
      for (const entry of requeue) {
        if (this.#isTracked(entry)) this.#queue.schedule(entry, entry.dueAt);
      }
    }
    try {
      this.#send(due);
    } catch (error) {
      this.#reportError(error);
    }
    this.#armTimer();
  }

  /**
   * Decides what a popped entry needs. One to send is requeued at its deadline
   * *before* sending, so its deadline stays watched whatever happens.
   */
  #inspect(entry: Entry, now: number, due: Entry[], requeue: Entry[]): void {
    const hold = entry.hold;
    try {
      if (!hold.active) {
        this.#forget(entry);
        return;
      }
      const cap = hold.maxLeaseAt;
      if (cap !== undefined && !(now < cap)) {
        // Never renewed past maxLeaseMs, even when its own timer is late.
        this.#forget(entry);
        this.#lose(hold, 'maxLease');
        return;
      }
      const deadline = hold.deadline;
      // `!(now < deadline)` also loses a hold whose deadline is NaN: when in doubt, lost.
      if (!(now < deadline)) {
        this.#loseUnreachable(entry, false);
        return;
      }
      requeue.push(entry);
      if (entry.sentLateMs !== WAITING) {
        entry.dueAt = Math.ceil(deadline); // core may have moved it meanwhile
        return;
      }
      const renewAt = Math.min(entry.renewAt, deadline);
      const earlyMs = Math.min(this.#options.coalesceWindowMs, periodMs(hold) / 10);
      if (renewAt - earlyMs <= now) {
        entry.sentLateMs = Math.round(this.#tickLateMs);
        entry.dueAt = Math.ceil(deadline);
        due.push(entry);
      } else {
        entry.dueAt = Math.min(entry.renewAt, Math.ceil(deadline));
      }
    } catch (error) {
      this.#dropBroken(entry, error);
    }
  }

  /** Groups due entries by batch key, chunks each group by maxBatch, sends every chunk at once. */
  #send(due: readonly Entry[]): void {
    if (due.length === 0) return;
    const groups = new Map<string, Entry[]>();
    const unkeyed: Entry[] = [];
    let keyError: unknown;
    for (const entry of due) {
      let key: string;
      try {
        key = this.#backend.batchKey(entry.hold);
      } catch (error) {
        keyError = error;
        unkeyed.push(entry);
        continue;
      }
      const group = groups.get(key);
      if (group === undefined) groups.set(key, [entry]);
      else group.push(entry);
    }
    if (unkeyed.length > 0) this.#onFailure(unkeyed, keyError);
    for (const group of groups.values()) {
      for (let start = 0; start < group.length; start += this.#maxBatch) {
        this.#renewBatch(group.slice(start, start + this.#maxBatch));
      }
    }
  }

  #renewBatch(chunk: readonly Entry[]): void {
    // Removed since the tick began (a lockLost handler, a close): nothing may go out after remove().
    const batch = chunk.filter((entry) => this.#isTracked(entry));
    if (batch.length === 0) return;
    const holds = batch.map((entry) => entry.hold);
    // Taken before the call: the lease the server sets starts no earlier than this,
    // so sentAt + lease − drift is a deadline the reply cannot overstate.
    const sentAt = performance.now();
    let call: Promise<unknown>;
    try {
      call = Promise.resolve(this.#backend.renew(holds));
    } catch (error) {
      call = Promise.reject(error);
    }
    const settled: Promise<void> = call
      .then(
        (outcomes) => this.#onReply(batch, sentAt, outcomes),
        (error: unknown) => this.#onFailure(batch, error),
      )
      .catch((error: unknown) => this.#reportError(error))
      .finally(() => {
        this.#inFlight.delete(settled);
      });
    this.#inFlight.add(settled);
  }

  #onReply(batch: readonly Entry[], sentAt: number, outcomes: unknown): void {
    if (this.#closing !== undefined) return;
    if (!Array.isArray(outcomes) || outcomes.length !== batch.length) {
      this.#onFailure(
        batch,
        new TypeError(`renew() of ${batch.length} holds resolved with ${Array.isArray(outcomes) ? `${outcomes.length} outcomes` : typeof outcomes}`),
      );
      return;
    }
    const now = performance.now();
    let renewed = 0;
    const unknown: Entry[] = [];
    let unknownOutcome: unknown;
    for (let i = 0; i < batch.length; i++) {
      const entry = batch[i] as Entry;
      // Removed (or removed and added again) while the call was out: the reply is not ours to apply.
      if (!this.#isTracked(entry)) continue;
      const hold = entry.hold;
      const outcome: unknown = outcomes[i];
      try {
        if (!hold.active) {
          this.#forget(entry);
        } else if (outcome === 'renewed') {
          if (!(now < hold.deadline)) {
            // A reply after the deadline counts as none: the caller already ran past the certain lease.
            this.#loseUnreachable(entry, true);
            continue;
          }
          try {
            hold.extend(sentAt);
            renewed++;
          } catch (error) {
            // Keep renewing: if extend keeps failing, the deadline check loses the hold.
            this.#reportError(error);
          }
          entry.sentLateMs = WAITING;
          entry.failed = undefined;
          entry.renewAt = Math.floor(sentAt + periodMs(hold));
          this.#queueNext(entry);
        } else if (outcome === 'gone' || outcome === 'taken') {
          this.#forget(entry);
          // Gone after a late send: the lease ran out while the event loop was blocked.
          const detail = outcome === 'gone' ? blockedDetail(entry.sentLateMs) : undefined;
          this.#lose(hold, outcome === 'gone' ? 'expired' : 'taken', undefined, detail);
        } else {
          unknown.push(entry);
          unknownOutcome = outcome;
        }
      } catch (error) {
        this.#dropBroken(entry, error);
      }
    }
    if (renewed > 0) {
      try {
        this.#reporter.renewed(renewed);
      } catch {
        // A throwing reporter has nowhere left to report to; renewal goes on.
      }
    }
    if (unknown.length > 0) {
      this.#onFailure(unknown, new TypeError(`renew() returned an unknown outcome ${describeValue(unknownOutcome)}`));
    }
    this.#armTimer();
  }

  /** A renew call failed as a whole: report once, then retry its holds together after a backoff. */
  #onFailure(batch: readonly Entry[], cause: unknown): void {
    if (this.#closing !== undefined) return;
    const live = batch.filter((entry) => this.#isTracked(entry));
    if (live.length === 0) return;
    const error = toError(cause);
    this.#reportError(error);
    let failures = 1;
    for (const entry of live) failures = Math.max(failures, (entry.failed?.count ?? 0) + 1);
    // One delay for the batch, so its holds retry in one call, not many small ones.
    const retryAt = performance.now() + backoffDelayMs(failures, this.#options.minRetryDelayMs, this.#options.maxRetryDelayMs, Math.random());
    // One record for the batch: its holds retry together, with the same count and cause.
    const failed: Failures = { count: failures, error };
    for (const entry of live) {
      try {
        entry.sentLateMs = WAITING;
        entry.failed = failed;
        entry.renewAt = Math.floor(retryAt);
        this.#queueNext(entry);
      } catch (err) {
        this.#dropBroken(entry, err);
      }
    }
    this.#armTimer();
  }

  /** Queues a waiting entry at its next renewal, or at its deadline if that comes first. */
  #queueNext(entry: Entry): void {
    const at = Math.min(entry.renewAt, Math.ceil(entry.hold.deadline));
    // A NaN key would break the heap order; queue it now and let the tick lose it.
    this.#queue.schedule(entry, Number.isNaN(at) ? Math.floor(performance.now()) : at);
  }

  /**
   * Loses a hold whose deadline passed unrenewed; the cause is the last failure,
   * or a RedisUnavailableError when a call was still out (or answered too late).
   */
  #loseUnreachable(entry: Entry, lateReply: boolean): void {
    this.#forget(entry);
    let cause = entry.failed?.error;
    if (entry.sentLateMs !== WAITING) {
      const name = safeName(entry.hold);
      const message = lateReply
        ? `the reply to the lease renewal of "${name}" came after its deadline`
        : `no reply to the lease renewal of "${name}" before its deadline`;
      cause = new RedisUnavailableError(message, { cause: entry.failed?.error });
    }
    this.#lose(entry.hold, 'unreachable', cause, blockedDetail(this.#tickLateMs));
  }

  /** A hold whose own methods or fields throw cannot be reasoned about: stop renewing and lose it. */
  #dropBroken(entry: Entry, error: unknown): void {
    this.#forget(entry);
    this.#reportError(error);
    this.#lose(entry.hold, 'unreachable', error);
  }

  #lose(hold: RenewableHold, reason: LostReason, cause?: unknown, detail?: string): void {
    try {
      if (detail === undefined) hold.lose(reason, cause);
      else hold.lose(reason, cause, detail);
    } catch (error) {
      this.#reportError(error);
    }
  }

  #reportError(error: unknown): void {
    try {
      this.#reporter.error(toError(error));
    } catch {
      // A throwing reporter has nowhere left to report to; renewal goes on.
    }
  }

  /** This watchdog's entry of `hold`, kept in the hold's renewer slot (no map per watchdog: ~46 B less per hold). */
  #entryOf(hold: RenewableHold): Entry | undefined {
    const entry = hold.renewal as Entry | undefined;
    return entry?.watchdog === this ? entry : undefined;
  }

  #isTracked(entry: Entry): boolean {
    return entry.hold.renewal === entry;
  }

  #untrack(entry: Entry): void {
    if (this.#isTracked(entry)) entry.hold.renewal = undefined;
  }

  #forget(entry: Entry): void {
    this.#untrack(entry);
    this.#queue.remove(entry);
  }

  /** Arms the single timer for the entry due first, unless it is already armed early enough. */
  #armTimer(): void {
    if (this.#closing !== undefined) return;
    const next = this.#queue.peek();
    if (next === undefined) {
      this.#clearTimer();
      return;
    }
    if (this.#timer !== undefined && this.#timerAt <= next.dueAt) return;
    this.#clearTimer();
    const now = performance.now();
    // Node fires a timer of more than 2^31 − 1 ms after 1 ms: cap it and re-arm on firing.
    const delayMs = Math.min(MAX_TIMER_DELAY_MS, Math.max(0, Math.ceil(next.dueAt - now)));
    this.#timerAt = Math.min(next.dueAt, now + delayMs);
    const timer = setTimeout(this.#onTimer, delayMs);
    // An idle client must not keep the process alive; a lease nobody waits for may lapse.
    timer.unref?.();
    this.#timer = timer;
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
  }
}

/** What a LockLostError adds when the event loop was blocked `lateMs` before the renewal ran; undefined when it was not. */
function blockedDetail(lateMs: number): string | undefined {
  if (lateMs < BLOCKED_LOOP_MIN_MS) return undefined;
  return `the event loop was blocked for ~${Math.round(lateMs)} ms before the renewal ran`;
}

/** The renewal period of a hold, in ms: a third of its lease. */
function periodMs(hold: RenewableHold): number {
  const leaseMs: unknown = hold.leaseMs;
  if (typeof leaseMs !== 'number' || !Number.isFinite(leaseMs) || leaseMs <= 0) {
    throw new InvalidArgumentError(`Watchdog: hold "${safeName(hold)}" has leaseMs ${describeValue(leaseMs)}; a renewed lease must be a positive number of ms`);
  }
  return leaseMs / 3;
}

function toError(value: unknown): Error {
  if (value instanceof Error) return value;
  return new Error(`non-Error thrown: ${describeValue(value)}`, { cause: value });
}

function safeName(hold: RenewableHold): string {
  try {
    return String(hold.name);
  } catch {
    return '?';
  }
}

function describeValue(value: unknown): string {
  try {
    return typeof value === 'string' ? JSON.stringify(value) : String(value);
  } catch {
    return typeof value;
  }
}
