// The acquisition call, observed: how it arrives, its first try, and the wait it enters when that try found no grant.
import { LockAcquireTimeoutError } from '../errors.js';
import type { EngineContext } from './engine-context.js';
import type { TryOutcome } from './attempt.js';
import { WaitCall, type WaitSpec } from './wait-call.js';
import { waitFor } from './wait-loop.js';
import { acquireChannel, type LockChannelContext } from '../observability/channels.js';

/** For tryLock and tryAcquire: a timeout caused by Redis not answering is that failure, not a refusal to report as false. */
export function unansweredFailure(error: unknown): unknown {
  return error instanceof LockAcquireTimeoutError && error.cause instanceof Error ? error.cause : error;
}

/** How an observed acquisition is labelled: its object kind, and what "no grant by waitMs" means for the call. */
export interface AcquireLabel {
  /** `rlock.object`: `lock`, `fair_lock`, `read_lock`, `semaphore`… */
  readonly object: string;
  /** A call that answers false (tryLock, tryAcquire, a latch's await): `not_acquired`; one that throws LockAcquireTimeoutError: `timeout`. */
  readonly refusal: 'not_acquired' | 'timeout';
}

/**
 * One acquisition call, observed (`rlock.acquire.duration`, `rlock.waiters.active`, the `rlock.acquire` span and channel, the
 * hold's tracking; every object kind acquires through here, so each is instrumented once): it tries, then waits as the object's
 * strategy says (WaitSpec.strategy) and tries again, until acquired, `waitMs` runs out (undefined) or the signal aborts. With
 * `waitMs` it settles by then whatever Redis does: a failure or no answer is the cause of a LockAcquireTimeoutError.
 */
export function acquireObserved<G>(ctx: EngineContext, spec: WaitSpec<G>, label: AcquireLabel): Promise<G | undefined> {
  // Made now: waitMs runs from the call, however long it is deferred. From here on the engine reads the call, not the spec.
  const call = new WaitCall(ctx, spec);
  call.watch = ctx.telemetry.startAcquire(label.object, call.name, label.refusal);
  if (!acquireChannel.hasSubscribers) return setOff(ctx, call);
  return acquireChannel.tracePromise(() => setOff(ctx, call), { object: label.object, name: call.name, owner: call.id } satisfies LockChannelContext);
}

/** How the call arrives: behind this process's waiters on its channel, or at once. */
function setOff<G>(ctx: EngineContext, call: WaitCall<G>): Promise<G | undefined> {
  // Work in progress from the call on, not only while a command is out: a Redlock round may wait on its masters' connects.
  ctx.reports.callStarted?.();
  // It waits in the object's local queue when it waits at all, by a strategy that queues: a waiter by back-off is in none.
  const queues = !call.triesOnce && call.strategy?.queues !== false;
  // Tasks of this process queue behind the ones already waiting (no barging): a releasing task that locks again at once
  // must not starve them. Such a call sends nothing until woken: past a few hundred in one turn, it sets out in a later one.
  if (call.arrival === 'queue' && queues && ctx.queues.hasWaiters(call.channel) && !ctx.queues.setsOutNow(call.channel))
    return ctx.queues.later(call.channel, call).then(() => setOut(ctx, call, queues));
  return setOut(ctx, call, queues);
}

/** The call from its arrival on: what it finds ahead of it decides whether it tries first or queues behind. */
function setOut<G>(ctx: EngineContext, call: WaitCall<G>, queues: boolean): Promise<G | undefined> {
  const { arrival, channel } = call;
  call.queueBehind = arrival === 'queue' && queues && ctx.queues.hasJoined(channel);
  // Where Redis keeps the order and the channel is subscribed, join before the first try: an announcement made
  // while it is out becomes a pending wake, so no second try after the acknowledgement is needed.
  if (call.queueBehind || (arrival === 'join' && queues && ctx.queues.isSubscribed(channel))) return waitFor(ctx, call, undefined);
  // Arrived to an empty local queue: whoever joins it meanwhile arrived later.
  const arriving = (call.arriving = call.queuesOthers && arrival === 'queue' && queues && !call.headOnly);
  if (arriving) ctx.queues.arrive(channel);
  // The first try is the call's one layer: only a refusal or a failure enters the wait.
  let first: Promise<TryOutcome<G>>;
  try {
    first = call.tryOnce();
  } catch (error) {
    first = Promise.reject(error);
  }
  return first.then(
    (outcome) => {
      if (!('grant' in outcome) || call.callerSignal?.aborted) return waitFor(ctx, call, { outcome });
      if (arriving) ctx.queues.arrived(channel, false);
      call.end();
      // Told here, in the reaction that settles the call, rather than in one more of its own.
      call.settled(outcome.grant);
      return outcome.grant;
    },
    (error: unknown) => waitFor(ctx, call, { error }),
  );
}
