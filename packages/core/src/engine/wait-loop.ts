// The wait loop: an acquisition past its first try, waiting as its object's strategy says, and how the call ends.
import { ClientClosedError, RedisUnavailableError } from '../errors.js';
import type { EngineContext } from './engine-context.js';
import type { TryOutcome } from './attempt.js';
import type { WaitCall } from './wait-call.js';
import { CHANNEL_WAIT } from './wait-on-channel.js';

/** How the first try went, when the call made one before waiting (none when it queued or joined first). */
export type FirstTry<G> = { readonly outcome: TryOutcome<G> } | { readonly error: unknown } | undefined;

/** The rest of an acquisition past its first try: the wait, and how the call ends, told to its watch (when observed) before the caller sees it. */
export function waitFor<G>(ctx: EngineContext, call: WaitCall<G>, first: FirstTry<G>): Promise<G | undefined> {
  const waiting = waitAndEnd(ctx, call, first);
  if (call.watch === undefined) return waiting;
  return waiting.then(
    (grant) => {
      call.settled(grant);
      return grant;
    },
    (error: unknown) => {
      call.settledWith(error);
      throw error;
    },
  );
}

async function waitAndEnd<G>(ctx: EngineContext, call: WaitCall<G>, first: FirstTry<G>): Promise<G | undefined> {
  let grant: G | undefined;
  // Read when the loop ends: a try cut off at waitMs may answer while the queue is left.
  let timedOut: Error | undefined;
  try {
    grant = await waitLoop(ctx, call, first);
    if (grant === undefined) timedOut = call.timedOut();
  } catch (error) {
    if (!call.expired) {
      // Whatever failed once close() began (a SUBSCRIBE or try cut off by the disconnect) is the close.
      if (ctx.closed && !(error instanceof ClientClosedError) && !call.callerSignal?.aborted) throw new ClientClosedError();
      throw error instanceof RedisUnavailableError ? call.notAcquired(error) : error;
    }
    timedOut = call.timedOut();
  } finally {
    call.dispose();
    if (grant === undefined && call.leaves) await call.leave();
    call.end();
  }
  if (grant === undefined) {
    if (timedOut) throw timedOut;
    return undefined;
  }
  const signal = call.callerSignal;
  if (signal?.aborted) {
    // Aborted while the grant was recorded: the caller will never release what it does not know it has.
    await call.giveBack(grant);
    throw signal.reason;
  }
  return grant;
}

/** The first try's outcome, as the wait reads it, then the wait the object's strategy picks. */
async function waitLoop<G>(ctx: EngineContext, call: WaitCall<G>, first: FirstTry<G>): Promise<G | undefined> {
  let retryInMs = ctx.maxSleepMs;
  if (first) {
    let outcome: TryOutcome<G>;
    try {
      outcome = 'outcome' in first ? call.answered(first.outcome) : { retryInMs: call.failed(first.error) };
    } catch (error) {
      // Those that queued behind this try wait for a wake: the next tries now.
      if (call.arriving) ctx.queues.arrived(call.channel, true);
      throw error;
    }
    // Granted: its release wakes them; refused: its client waits, and it joins them.
    if (call.arriving) ctx.queues.arrived(call.channel, false);
    if ('grant' in outcome) return outcome.grant;
    if (call.triesOnce) return undefined;
    retryInMs = outcome.retryInMs;
  }
  return (call.strategy ?? CHANNEL_WAIT).wait(ctx, call, retryInMs);
}
