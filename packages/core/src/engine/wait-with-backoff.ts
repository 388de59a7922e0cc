import { monotonicNow } from '../connection/time.js';
import { backoffDelayMs } from './backoff.js';
import type { EngineContext } from './engine-context.js';
import type { WaitCall } from './wait-call.js';
import type { WaitSpec } from './wait-spec.js';
import type { BackoffWait } from './wait-strategy.js';
import type { WaitTries } from './wait-tries.js';

/** A refusal's hint as a cap on the next wait: the holder's TTL (at least 1 ms); −1 (no TTL) caps nothing. */
const untilLapseMs = (retryInMs: number): number => (retryInMs >= 0 ? Math.max(1, retryInMs) : Number.POSITIVE_INFINITY);

/**
 * Waits by back-off: subscribes to nothing and joins no local queue (each waiting task tries on its own, so a release wakes
 * nobody); after each refusal it sleeps the plan's next jittered delay, no later than the holder's TTL runs out, and tries
 * again, until granted or the call's deadline. A Redis failure is ridden out with the failure's own back-off (WaitTries).
 * `retryInMs`: the first try's answer.
 */
export async function waitWithBackoff<G>(
  ctx: EngineContext,
  spec: WaitSpec<G>,
  call: WaitCall<G>,
  tries: WaitTries<G>,
  plan: BackoffWait,
  retryInMs: number,
): Promise<G | undefined> {
  const waitUntil = call.deadline;
  let refusals = 0;
  // Counted among the waiters (rlock.waiters.active) while it waits, as one on a channel is.
  spec.watch?.joined();
  try {
    for (;;) {
      const remaining = waitUntil - monotonicNow();
      if (remaining <= 0) return undefined;
      const delayMs = tries.failing
        ? retryInMs
        : Math.min(backoffDelayMs(++refusals, plan.initialDelayMs, plan.maxDelayMs, Math.random(), plan.multiplier), untilLapseMs(retryInMs));
      // Ended early by the caller's signal (or waitMs), and by the client's close.
      await ctx.queues.sleepApart(Math.min(delayMs, remaining), call.signal);
      // No try starts once waitMs has run out: it could not answer in time.
      if (waitUntil - monotonicNow() <= 0) return undefined;
      const result = await tries.tryOnce();
      if ('grant' in result) return result.grant;
      retryInMs = result.retryInMs;
    }
  } finally {
    spec.watch?.left();
  }
}
