import { RedisUnavailableError } from '../errors.js';
import { monotonicNow } from '../connection/time.js';
import { withinMs } from '../connection/bounded-call.js';
import type { EngineContext } from './engine-context.js';
import type { TryOutcome } from './attempt.js';
import type { WaitSpec } from './wait-spec.js';
import { onAbort } from '../tasks/abort-fan-out.js';

/** Why a bounded call's signal aborted when `waitMs` ran out (never seen by callers). */
const WAIT_EXPIRED: unique symbol = Symbol('waitMs ran out');

/** A try or subscription out this long (ms) when `waitMs` runs out means Redis did not answer; shorter is a round trip in flight: tryLock gives false. */
const UNANSWERED_MS = 100;

/**
 * One waiting call; its signal is the caller's, also aborted at `waitMs`, so it settles by then whatever Redis does. That
 * signal is made when first asked for: a call deferred behind its client's waiters costs no controller or timer until it sets out.
 */
export class WaitCall<G> {
  /** Monotonic time at which `waitMs` runs out (infinite without one). */
  readonly deadline: number;
  /** `waitMs` 0: one try, no wait (a failure is not ridden out). */
  readonly triesOnce: boolean;
  /** The Redis failure of the latest try or subscription (or the one a refusal reported), until one succeeds: a timeout's cause. */
  failure: Error | undefined;
  /** Since when (monotonic ms) a try or subscription has been out; undefined while none is. */
  private outSince: number | undefined;
  private expiry: AbortController | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Stops passing the caller's abort on to the call's own signal. */
  private stopForwarding: (() => void) | undefined;
  private disposed = false;

  constructor(private readonly spec: WaitSpec<G>) {
    this.deadline = spec.waitMs === undefined ? Number.POSITIVE_INFINITY : monotonicNow() + spec.waitMs;
    this.triesOnce = spec.waitMs === 0;
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

  /** Why the call timed out, if Redis is why: a try or subscription out UNANSWERED_MS or more, else the latest failure. */
  timeoutCause(): Error | undefined {
    if (this.outSince !== undefined && monotonicNow() - this.outSince >= UNANSWERED_MS) {
      const outMs = Math.round(monotonicNow() - this.outSince);
      return new RedisUnavailableError(
        `Redis did not answer for "${this.spec.name}": a try or its SUBSCRIBE had been out ${outMs} ms when waitMs (${this.spec.waitMs} ms) ran out`,
        { cause: this.failure },
      );
    }
    return this.failure;
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

  tryOnce(ctx: EngineContext): Promise<TryOutcome<G>> {
    // Without a signal nothing can cut a try off: it is the call's own promise, with no layer around it.
    return this.signal ? this.tryRacing(ctx) : this.spec.tryOnce(undefined);
  }

  private async tryRacing(ctx: EngineContext): Promise<TryOutcome<G>> {
    const work = this.spec.tryOnce(this.signal);
    try {
      return await this.race(work);
    } catch (error) {
      // A grant this try still records belongs to nobody: give it back.
      work.then(
        (outcome) => {
          if ('grant' in outcome) void this.spec.giveBack?.(outcome.grant).catch((giveBackError: unknown) => ctx.backgroundError(giveBackError));
        },
        () => undefined,
      );
      throw error;
    }
  }

  /** Waits for `work` (leaving a queue kept in Redis) no later than the deadline; it goes on after. */
  async until(work: Promise<unknown>): Promise<void> {
    if (!Number.isFinite(this.deadline)) {
      await work;
      return;
    }
    await withinMs(work, Math.max(0, this.deadline - monotonicNow()), () => undefined).catch(() => undefined);
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    this.stopForwarding?.();
  }
}
