import { monotonicNow, sleepFor } from '../connection/time.js';
import type { EngineContext } from './engine-context.js';
import { Hold } from './hold.js';
import type { WaitCall, WaitStrategy } from './wait-call.js';
import type { Waiter } from './wait-queue.js';

/** How long a grant excludes others at most, ms: a hold's time to its deadline; −1 (unknown) for other grants. */
function grantLeftMs(grant: unknown): number {
  return grant instanceof Hold ? Math.max(0, grant.deadline - monotonicNow()) : -1;
}

/**
 * Waits on the object's channel: joins the local queue (subscribed once for all its waiters), tries once the subscription is
 * acknowledged, then again when woken by a release or when the holder's TTL runs out (capped at a third of the watchdog
 * lease), until granted or the call's deadline. `retryInMs`: the first try's hint (the cap when none was made).
 */
async function waitOnChannel<G>(ctx: EngineContext, call: WaitCall<G>, retryInMs: number): Promise<G | undefined> {
  const waitUntil = call.deadline;
  let waiter: Waiter | undefined;
  let acquired = false;
  let entered: Waiter | undefined;
  let joining: Promise<Waiter> | undefined;
  try {
    for (;;) {
      joining = call.join((joined) => (entered = joined));
      try {
        // Subscribed already: the join settles at once, so it needs no bound (nor the call's signal: see WaitCall).
        waiter = await (ctx.queues.isSubscribed(call.channel) ? joining : call.race(joining));
        break;
      } catch (error) {
        // Without waitMs a failed SUBSCRIBE (a refused connection) fails the call; with it, it is ridden out like a try.
        if (waitUntil === Number.POSITIVE_INFINITY || call.signal?.aborted) throw error;
        entered = undefined;
        const delayMs = Math.min(call.failed(error), waitUntil - monotonicNow());
        if (delayMs <= 0) return undefined;
        await sleepFor(delayMs, call.signal);
      }
    }
    // Subscribed (acknowledged): no later release can be missed, so one more
    // try closes the gap since the first (or, having joined first, is the first).
    let tryNow = !call.queueBehind;
    const queue = waiter.queue;
    // Capped at a third of the watchdog lease: a TTL of −1 must not park a waiter forever.
    const retryDelay = (ms: number): number => Math.min(ms >= 0 ? Math.max(1, ms) : ctx.maxSleepMs, ctx.maxSleepMs);
    for (;;) {
      // No try starts once waitMs has run out: it could not answer in time.
      if (tryNow && (!call.headOnly || waiter.isHead) && waitUntil - monotonicNow() > 0) {
        const result = await call.retry();
        const timed = waiter.timed;
        waiter.timed = false;
        if ('grant' in result) {
          acquired = true;
          if (waiter.sharesRetry) {
            // Exclusive: the others' next timed try is due when this grant could lapse. Shared (readers, permits, an open
            // latch): a timed try that found room stood for all, so the next sharing waiter tries at once.
            if (call.exclusive) queue.retryIn(retryDelay(grantLeftMs(result.grant)));
            else if (timed) queue.retryIn(0);
          }
          // Branches of one task share its ownership: those waiting beside this one can reenter now.
          ctx.queues.wakeSiblings(waiter);
          return result.grant;
        }
        retryInMs = result.retryInMs;
        if (waiter.sharesRetry) queue.retryIn(retryDelay(retryInMs));
      }
      const remaining = waitUntil - monotonicNow();
      if (remaining <= 0) return undefined;
      // A sharing waiter has no timed try of its own (the queue's is armed): only waitMs ends its sleep.
      if (waiter.sharesRetry && !queue.retryArmed) queue.retryIn(retryDelay(retryInMs));
      const sleepMs = waiter.sharesRetry || (call.headOnly && !waiter.isHead) ? remaining : Math.min(retryDelay(retryInMs), remaining);
      // The caller's signal, not the call's: a waiter that sleeps from its arrival to waitMs never makes the latter.
      const reason = await waiter.sleep(sleepMs, call.callerSignal);
      if (waiter.queue.closedError) throw waiter.queue.closedError;
      const handOff = waiter.handOff;
      if (handOff !== undefined) {
        waiter.handOff = undefined;
        const grant = call.takeHandOff(handOff);
        if (grant !== undefined) {
          acquired = true;
          ctx.queues.wakeSiblings(waiter);
          return grant;
        }
      }
      // Its own timer at waitMs (which may fire a fraction of a ms early) is no cue to try.
      tryNow = reason !== 'timeout' || waiter.timed || sleepMs < remaining;
    }
  } finally {
    if (waiter) ctx.queues.leave(waiter, acquired);
    else {
      // Cut off while joining: out of the queue at once, so no wake or hand-off goes to an ended call.
      joining?.catch(() => undefined);
      if (entered) ctx.queues.leave(entered, false);
    }
  }
}

/** Waiting on the object's channel: what a wait spec without a strategy does. */
export const CHANNEL_WAIT: WaitStrategy = Object.freeze({ queues: true, wait: waitOnChannel });
