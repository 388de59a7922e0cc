import { monotonicNow } from '../connection/time.js';
import { backoffDelayMs } from './backoff.js';
import type { EngineContext } from './engine-context.js';
import type { WaitCall, WaitStrategy } from './wait-call.js';

/** A refusal's hint as a cap on the next wait: the holder's TTL (at least 1 ms); −1 (no TTL) caps nothing. */
const untilLapseMs = (retryInMs: number): number => (retryInMs >= 0 ? Math.max(1, retryInMs) : Number.POSITIVE_INFINITY);

/**
 * Waiting by back-off: the n-th wait after a refusal is drawn uniformly from [b / 2, b], b = min(maxDelayMs, initialDelayMs ·
 * multiplier^n), never below initialDelayMs, and no later than the holder's TTL runs out. The jitter keeps waiters that
 * were refused together from trying together again.
 */
export class BackoffWait implements WaitStrategy {
  /** Each waiting task tries on its own: it joins no local queue, so a release wakes nobody. */
  readonly queues = false;

  constructor(
    readonly initialDelayMs: number,
    readonly maxDelayMs: number,
    readonly multiplier: number,
  ) {}

  /**
   * Subscribes to nothing; after each refusal it sleeps the next jittered delay, no later than the holder's TTL runs out, and
   * tries again, until granted or the call's deadline. A Redis failure is ridden out with the failure's own back-off (WaitCall).
   */
  async wait<G>(ctx: EngineContext, call: WaitCall<G>, retryInMs: number): Promise<G | undefined> {
    const waitUntil = call.deadline;
    let refusals = 0;
    // Counted among the waiters (rlock.waiters.active) while it waits, as one on a channel is.
    call.watch?.joined();
    try {
      for (;;) {
        const remaining = waitUntil - monotonicNow();
        if (remaining <= 0) return undefined;
        const delayMs = call.failing
          ? retryInMs
          : Math.min(backoffDelayMs(++refusals, this.initialDelayMs, this.maxDelayMs, Math.random(), this.multiplier), untilLapseMs(retryInMs));
        // Ended early by the caller's signal (or waitMs), and by the client's close.
        await ctx.queues.sleepApart(Math.min(delayMs, remaining), call.signal);
        // No try starts once waitMs has run out: it could not answer in time.
        if (waitUntil - monotonicNow() <= 0) return undefined;
        const result = await call.retry();
        if ('grant' in result) return result.grant;
        retryInMs = result.retryInMs;
      }
    } finally {
      call.watch?.left();
    }
  }
}
