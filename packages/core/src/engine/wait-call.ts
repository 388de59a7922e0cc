// One acquisition call: what its object says of it (WaitSpec), how it waits (WaitStrategy), and the engine's state of it (WaitCall).
import { LockAcquireTimeoutError, LockLostError, RedisUnavailableError, socketError } from '../errors.js';
import { monotonicNow } from '../connection/time.js';
import { withinMs } from '../connection/bounded-call.js';
import type { EngineContext } from './engine-context.js';
import { retryUntilAnswered, type TryOutcome } from './attempt.js';
import { backoffDelayMs } from './backoff.js';
import { Hold } from './hold.js';
import type { Waiter, WaitQueue } from './wait-queue.js';
import type { AcquireWatch } from '../observability/telemetry.js';
import { onAbort } from '../tasks/abort-fan-out.js';

/** How an acquisition waits for a grant of type `G`: on which channel, as whom, and what a try is. Read by its {@link WaitCall} alone. */
export interface WaitSpec<G> {
  /** The object's name, for a LockAcquireTimeoutError. */
  readonly name: string;
  readonly channel: string;
  /** How it learns it may try again; absent: on `channel` (`CHANNEL_WAIT`). */
  readonly strategy?: WaitStrategy;
  /** Who waits: the owner, or an id the object's messages name. */
  readonly id: string;
  /** Only the head of the local queue tries (Redlock); the others wait their turn. */
  readonly headOnly: boolean;
  /** Its tries keep a place in Redis (a fair lock's queue, a writer's waiter lease): it keeps a timed try of its own. */
  readonly keepsPlace?: boolean;
  /** A grant excludes the other waiters here (an exclusive lock): the shared timed try is next due when the grant's lease could end. */
  readonly exclusive?: boolean;
  /** The object's wake policy: what a message on the channel wakes; false when it is none of the object's (dropped, counted). */
  readonly onMessage: (payload: string, queue: WaitQueue) => boolean;
  /**
   * 'queue': behind this process's waiters (no barging); 'join': into the local queue before the first try, where Redis keeps
   * the order; 'try': at once (a reentry would wait for itself; a latch's readers do not compete).
   */
  readonly arrival: 'queue' | 'join' | 'try';
  /** With 'queue': later arrivals in this process queue behind this call's first try (theirs could only win if it failed): a burst sends one try. */
  readonly queuesOthers?: boolean;
  /** Called when the call ends without a grant (timed out, aborted, failed): leave a queue kept in Redis. */
  leave?(): Promise<unknown>;
  /** undefined: without limit; 0: try once. */
  readonly waitMs: number | undefined;
  readonly signal: AbortSignal | undefined;
  /** One try (usually an {@link attempt}) under `signal`: the caller's, aborted also when `waitMs` runs out. */
  tryOnce(signal: AbortSignal | undefined): Promise<TryOutcome<G>>;
  /** A grant a script's reply handed the waiter (a fair lock's release to a head of its client), recorded; undefined: its next try claims it. */
  takeHandOff?(handOff: unknown): G | undefined;
  /** Gives back a grant its caller aborted before seeing; absent where a grant binds nobody (a latch's "open"). */
  giveBack?(grant: G): Promise<unknown>;
  /** Called once as the call ends, granted or not, before its caller hears (in a reaction the call makes anyway). */
  readonly ended?: () => void;
}

/**
 * How a waiter learns it may try again, as its object picks it: on the object's channel (`CHANNEL_WAIT`, the default: woken by
 * a release message, with a timed try at the holder's TTL for a message lost) or by back-off (`BackoffWait`: it never subscribes
 * and tries again after jittered, exponentially growing delays). It reads the engine's state of the call, never the caller's spec.
 */
export interface WaitStrategy {
  /** Its waiters join the object's local wait queue, and a call arriving behind this process's waiters queues behind them. */
  readonly queues: boolean;
  /** Tries again until granted (the grant) or the call's deadline (undefined); `retryInMs`: the first try's hint. */
  wait<G>(ctx: EngineContext, call: WaitCall<G>, retryInMs: number): Promise<G | undefined>;
}

/** Why a bounded call's signal aborted when `waitMs` ran out (never seen by callers). */
const WAIT_EXPIRED: unique symbol = Symbol('waitMs ran out');

/** A try or subscription out this long (ms) when `waitMs` runs out means Redis did not answer; shorter is a round trip in flight: tryLock gives false. */
const UNANSWERED_MS = 100;

/**
 * One acquisition call, the one reader of its spec; its signal is the caller's, also aborted at `waitMs`, so it settles by then
 * whatever Redis does. That signal is made when first asked for: a call deferred behind its client's waiters costs no controller
 * or timer until it sets out. A Redis failure among its tries is ridden out with jittered backoff for up to commandTimeoutMs (no
 * later than `waitMs`, when the last failure is the timeout's cause); `waitMs` 0 fails at once.
 */
export class WaitCall<G> {
  /** Monotonic time at which `waitMs` runs out (infinite without one). */
  readonly deadline: number;
  /** `waitMs` 0: one try, no wait (a failure is not ridden out). */
  readonly triesOnce: boolean;
  /** The Redis failure of the latest try or subscription (or the one a refusal reported), until one succeeds: a timeout's cause. */
  failure: Error | undefined;
  /** Queued behind this process's waiters as it arrived: its first try follows the subscription. */
  queueBehind = false;
  /** Its first try kept the process's later arrivals queued behind it: it joins the queue at the front. */
  arriving = false;
  /** Since when (monotonic ms) a try or subscription has been out; undefined while none is. */
  private outSince: number | undefined;
  private expiry: AbortController | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Stops passing the caller's abort on to the call's own signal. */
  private stopForwarding: (() => void) | undefined;
  private disposed = false;
  /** Since when (monotonic ms) its tries have failed, and how many did: the backoff between them. */
  private failingSince: number | undefined;
  private failures = 0;

  /** Observability's view of the call (`rlock.acquire`, waiters.active), when observed (see acquireObserved). */
  watch: AcquireWatch | undefined = undefined;

  constructor(
    private readonly ctx: EngineContext,
    private readonly spec: WaitSpec<G>,
  ) {
    this.deadline = spec.waitMs === undefined ? Number.POSITIVE_INFINITY : monotonicNow() + spec.waitMs;
    this.triesOnce = spec.waitMs === 0;
  }

  get name(): string {
    return this.spec.name;
  }

  get channel(): string {
    return this.spec.channel;
  }

  get id(): string {
    return this.spec.id;
  }

  get headOnly(): boolean {
    return this.spec.headOnly;
  }

  get exclusive(): boolean {
    return this.spec.exclusive === true;
  }

  get arrival(): 'queue' | 'join' | 'try' {
    return this.spec.arrival;
  }

  get queuesOthers(): boolean {
    return this.spec.queuesOthers === true;
  }

  get strategy(): WaitStrategy | undefined {
    return this.spec.strategy;
  }

  /** The caller's own signal (see {@link WaitQueues.later}). */
  get callerSignal(): AbortSignal | undefined {
    return this.spec.signal;
  }

  get signal(): AbortSignal | undefined {
    if (this.expiry) return this.expiry.signal;
    const { waitMs, signal } = this.spec;
    // Unbounded, or one try: each call is bounded by commandTimeoutMs already. Disposed: nothing would clear a new timer.
    if (waitMs === undefined || this.triesOnce || this.disposed) return signal;
    const expiry = (this.expiry = new AbortController());
    // Cuts off whatever is out at waitMs: a try, a subscription, a sleep. A
    // grant that still comes is undone by its attempt (the signal is aborted).
    const leftMs = this.deadline - monotonicNow();
    if (signal?.aborted) expiry.abort(signal.reason);
    else if (leftMs <= 0) expiry.abort(WAIT_EXPIRED);
    else {
      this.timer = setTimeout(() => expiry.abort(WAIT_EXPIRED), leftMs);
      this.timer.unref();
      if (signal) this.stopForwarding = onAbort(signal, () => expiry.abort(signal.reason));
    }
    return expiry.signal;
  }

  get expired(): boolean {
    return this.expiry?.signal.reason === WAIT_EXPIRED;
  }

  /**
   * The call's timeout error, when `waitMs` ran out without a grant and Redis is why: a try or subscription out UNANSWERED_MS or
   * more, else the latest failure. Undefined when it only found the object taken (or tried once).
   */
  timedOut(): LockAcquireTimeoutError | undefined {
    const { name, waitMs } = this.spec;
    let cause = this.failure;
    if (this.outSince !== undefined && monotonicNow() - this.outSince >= UNANSWERED_MS) {
      const outMs = Math.round(monotonicNow() - this.outSince);
      const message = `Redis did not answer for "${name}": a try or its SUBSCRIBE had been out ${outMs} ms when waitMs (${waitMs} ms) ran out`;
      cause = new RedisUnavailableError(message, { cause: this.failure });
    }
    return waitMs && cause ? new LockAcquireTimeoutError(name, waitMs, { cause }) : undefined;
  }

  /**
   * A Redis failure that ended the call, said of the object the call was for rather than of a key or channel inside it (a
   * SUBSCRIBE on an internal channel); the socket's error stays the cause where there is one.
   */
  notAcquired(error: RedisUnavailableError): RedisUnavailableError {
    const socket = socketError(error.cause);
    const why = socket === undefined ? error.message : `Redis is unavailable (${socket.message})`;
    return new RedisUnavailableError(`lock "${this.spec.name}" was not acquired: ${why}`, { cause: socket ?? error });
  }

  /** Settles like `work`, or rejects when the signal aborts (`work` goes on, and undoes a late grant); meanwhile the call waits on Redis. */
  race<T>(work: Promise<T>): Promise<T> {
    const signal = this.signal;
    if (!signal) return work;
    if (signal.aborted) {
      work.catch(() => undefined);
      return Promise.reject(signal.reason);
    }
    const since = monotonicNow();
    this.outSince = since;
    return new Promise<T>((resolve, reject) => {
      // Deferred a turn: a try that already answered settles the call first,
      // so its grant is given back by the caller rather than leaked.
      const stopListening = onAbort(signal, () => {
        setImmediate(() => reject(signal.reason));
      });
      const answered = (): void => {
        stopListening();
        if (this.outSince === since) this.outSince = undefined;
      };
      work.then(
        (value) => {
          answered();
          resolve(value);
        },
        (error: unknown) => {
          answered();
          reject(error);
        },
      );
    });
  }

  tryOnce(): Promise<TryOutcome<G>> {
    // Without a signal nothing can cut a try off: it is the call's own promise, with no layer around it.
    return this.signal ? this.tryRacing() : this.spec.tryOnce(undefined);
  }

  private async tryRacing(): Promise<TryOutcome<G>> {
    const work = this.spec.tryOnce(this.signal);
    try {
      return await this.race(work);
    } catch (error) {
      // A grant this try still records belongs to nobody: give it back.
      work.then(
        (outcome) => void ('grant' in outcome && this.giveBack(outcome.grant)),
        () => undefined,
      );
      throw error;
    }
  }

  /** True while the latest try or subscription failed (Redis, not a holder, is why it waits). */
  get failing(): boolean {
    return this.failingSince !== undefined;
  }

  /** How long to wait before trying again after `error`; rethrows it when it is no outage, or the outage lasted too long. */
  failed(error: unknown): number {
    if (!(error instanceof RedisUnavailableError) || this.triesOnce) throw error;
    this.failure = error;
    this.failingSince ??= monotonicNow();
    const { commandTimeoutMs } = this.ctx;
    if (monotonicNow() - this.failingSince >= commandTimeoutMs) throw error;
    return backoffDelayMs(++this.failures, Math.min(50, commandTimeoutMs), commandTimeoutMs, Math.random());
  }

  /** Redis answered: the outage, if any, is over; a refusal's failure (no majority answered) is the timeout's cause. */
  answered(outcome: TryOutcome<G>): TryOutcome<G> {
    this.failingSince = undefined;
    this.failures = 0;
    this.failure = 'failure' in outcome ? outcome.failure : undefined;
    return outcome;
  }

  /** One try of the wait: its outcome, or a failure ridden out as a wait before the next. */
  async retry(): Promise<TryOutcome<G>> {
    try {
      return this.answered(await this.tryOnce());
    } catch (error) {
      return { retryInMs: this.failed(error) };
    }
  }

  /** A grant a script's reply handed the waiter, recorded (see {@link WaitSpec.takeHandOff}). */
  takeHandOff(handOff: unknown): G | undefined {
    return this.spec.takeHandOff?.(handOff);
  }

  /** Gives back a grant its caller will never see (one already lost needs nothing more); a failure is reported. */
  giveBack(grant: G): Promise<unknown> | undefined {
    return this.spec.giveBack?.(grant).catch((error: unknown) => {
      if (!(error instanceof LockLostError)) this.ctx.backgroundError(error);
    });
  }

  /** Joins the object's local wait queue, at the front when its first try kept the process's later arrivals behind it. */
  join(entered: (waiter: Waiter) => void): Promise<Waiter> {
    return this.ctx.queues.join(this.spec, entered, this.arriving, this.watch);
  }

  /**
   * Out of a queue kept in Redis, waited for no later than `waitMs` (it goes on after, in the owner's turn). Unanswered, it is
   * sent again until Redis answers: a try of this call parked in the connection's offline queue runs once Redis is back and
   * queues the owner, whose place only a leave sent after it gives up (else it heads the queue for its waiter lease).
   * `leaves`: whether the call keeps a place in Redis to leave (most do not, and skip the promise of `leave()`).
   */
  get leaves(): boolean {
    return this.spec.leave !== undefined;
  }

  async leave(): Promise<void> {
    const { ctx, spec } = this;
    if (!spec.leave) return;
    const leave = spec.leave.bind(spec);
    const leaving = leave().catch((error: unknown) =>
      error instanceof RedisUnavailableError ? void retryUntilAnswered(ctx, leave) : ctx.backgroundError(error),
    );
    ctx.background.track(leaving);
    if (!Number.isFinite(this.deadline)) await leaving;
    else await withinMs(leaving, Math.max(0, this.deadline - monotonicNow()), () => undefined).catch(() => undefined);
  }

  /** Tells the watch (when observed) that the call granted `grant` (undefined: not acquired), before its caller hears. */
  settled(grant: G | undefined): void {
    // A hold lost before its call settled has ended already, and is not tracked.
    this.watch?.settled(grant, grant instanceof Hold && grant.active ? grant : undefined);
  }

  /** Tells the watch (when observed) that the call failed with `error`: aborted by its caller, or an error. */
  settledWith(error: unknown): void {
    this.watch?.failed(error, this.spec.signal?.aborted === true);
  }

  /** The call ends, granted or not: its object and the client's reports hear it before its caller does. */
  end(): void {
    this.dispose();
    this.spec.ended?.();
    this.ctx.reports.callEnded?.();
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    this.stopForwarding?.();
  }
}
