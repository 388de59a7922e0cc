import { ClientClosedError, LockLostError, RedisUnavailableError } from '../errors.js';
import type { EngineContext } from './engine-context.js';
import { Hold, type HoldTarget } from './hold.js';
import { leaseDeadline, monotonicNow } from './time.js';
import type { WaitQueue, Waiter } from './wait-queue.js';

/** What one acquire call answered, as the object reads it. */
export type AcquireReply<G = unknown> =
  | {
      readonly granted: true;
      /** The hold's fencing token (undefined where there is none). */
      readonly token: string | undefined;
      /** The owner's count in Redis after the call; undefined when counted here (only first and last reach Redis). */
      readonly count: number | undefined;
      /** The object's own data about the grant (Redlock: each master's token). */
      readonly grant?: G;
    }
  | {
      readonly granted: false;
      /** How long to wait at most before trying again (the holder's TTL; −1: no TTL). */
      readonly retryInMs: number;
      /** Who holds it, where the reply says. */
      readonly holder?: string;
    };

/** What one try of an acquisition found. */
export type TryOutcome = { readonly hold: Hold } | { readonly retryInMs: number };

/** One attempt: the object's call, and how to cancel it. */
export interface AttemptSpec<G> {
  readonly target: HoldTarget;
  /** Fixed lease in ms; undefined: a watchdog lease. */
  readonly leaseMs: number | undefined;
  readonly signal: AbortSignal | undefined;
  send(op: string, leaseMs: number): Promise<AcquireReply<G>>;
  /** Cancels the acquire `op`, whether it ran, will run late, or never arrives. */
  undo(op: string): Promise<unknown>;
}

/**
 * One acquire call, with the guarantees every object needs: an operation id,
 * the monotonic time taken *before* the send, and an undo when the grant came
 * too late to be counted on (past lease − drift), the caller aborted, the
 * client closed, or no answer came in time (the call may still run). The undo
 * is sent inside the owner's turn, right behind the acquire on the same
 * connection, so no other operation of the owner lands between the two.
 */
export async function attempt<G>(ctx: EngineContext, spec: AttemptSpec<G>): Promise<TryOutcome> {
  ctx.assertOpen();
  spec.signal?.throwIfAborted();
  const { target } = spec;
  const leaseMs = spec.leaseMs ?? ctx.watchdogTimeoutMs;
  const op = ctx.newOpId();
  const undo = (): Promise<void> => {
    const work = spec.undo(op).then(
      () => undefined,
      (error: unknown) => ctx.backgroundError(error),
    );
    ctx.background.track(work);
    return work;
  };
  const turn = ctx.chains.enter(target.key, target.owner);
  if (turn) await turn;
  let outcome: TryOutcome | 'undone';
  try {
    const sentAt = monotonicNow();
    let reply: AcquireReply<G>;
    try {
      reply = await spec.send(op, leaseMs);
    } catch (error) {
      // No answer: the acquire may still run. The undo goes out behind it on
      // the same connection; the caller hears of the failure now.
      if (error instanceof RedisUnavailableError) void undo();
      throw error;
    }
    if (!reply.granted) {
      outcome = { retryInMs: reply.retryInMs };
    } else if (spec.signal?.aborted || ctx.closed || monotonicNow() >= leaseDeadline(sentAt, leaseMs, target.driftFactor)) {
      // Within the owner's turn: the owner's next operation goes out only once
      // the undo was answered, so nothing of the owner can land between them.
      await undo();
      outcome = 'undone';
    } else {
      outcome = { hold: recordGrant(ctx, target, reply, sentAt, spec.leaseMs) };
    }
  } finally {
    ctx.chains.leave(target.key, target.owner);
  }
  if (outcome !== 'undone') return outcome;
  spec.signal?.throwIfAborted();
  if (ctx.closed) throw new ClientClosedError();
  return { retryInMs: 1 };
}

/**
 * Records a grant on the owner's hold, or on a new one. A grant that shows a
 * hold this client believed active is gone (another token; or, for an
 * exclusive mode, another owner of this client granted) marks it lost first:
 * one process never believes in two holders.
 */
export function recordGrant<G>(
  ctx: EngineContext,
  target: HoldTarget,
  reply: AcquireReply<G> & { granted: true },
  sentAt: number | undefined,
  fixedLeaseMs: number | undefined,
): Hold {
  let hold = ctx.holds.current(target.key, target.mode, target.owner);
  if (hold?.active && reply.count !== undefined && hold.token !== reply.token) hold.lose('expired');
  if (target.exclusive) ctx.holds.loseOthers(target.key, target.mode, target.owner);
  if (!hold?.active) {
    const fresh = new Hold<G>(target, reply.token, ctx.watchdogTimeoutMs, ctx.observer, reply.grant);
    if (hold && hold.count > 0) fresh.previous = hold as Hold<G>;
    ctx.holds.set(fresh);
    hold = fresh;
  }
  hold.acquired(reply.count ?? hold.count + 1, sentAt, fixedLeaseMs);
  ctx.acquired(hold);
  return hold;
}

/** How an acquisition waits: on which channel, as whom, and what a try is. */
export interface WaitSpec {
  readonly channel: string;
  /** Who waits: the owner, or an id the object's messages name. */
  readonly id: string;
  /** Only the head of the local queue tries (Redlock); the others wait their turn. */
  readonly headOnly: boolean;
  /** The object's wake policy: what a message on the channel wakes. */
  readonly onMessage: (payload: string, queue: WaitQueue) => void;
  /** A reentry never queues behind local waiters (it would wait for itself). */
  readonly reentry: boolean;
  /** undefined: without limit; 0: try once. */
  readonly waitMs: number | undefined;
  readonly signal: AbortSignal | undefined;
  /** One try (usually an {@link attempt}). */
  tryOnce(): Promise<TryOutcome>;
  /** Releases the acquisition just granted (its caller aborted while it was being recorded). */
  giveBack(hold: Hold): Promise<unknown>;
}

/**
 * Tries, then waits on the object's channel and tries again when woken or when
 * the holder's TTL (capped at a third of the watchdog lease, since a TTL of −1
 * must not park a waiter forever) runs out, until acquired, `waitMs` runs out
 * (undefined), or the signal aborts (rejects with its reason).
 */
export async function acquireOrWait(ctx: EngineContext, spec: WaitSpec): Promise<Hold | undefined> {
  let hold: Hold | undefined;
  try {
    hold = await waitLoop(ctx, spec);
  } catch (error) {
    // Whatever failed once close() began (a SUBSCRIBE or a try cut off by the
    // disconnect) is reported as the close it is.
    if (ctx.closed && !(error instanceof ClientClosedError) && !spec.signal?.aborted) throw new ClientClosedError();
    throw error;
  }
  if (hold && spec.signal?.aborted) {
    // The caller gave up while the grant was being recorded (a listener of
    // lockAcquired, say): it will never release what it does not know it has,
    // so the acquisition is given back at once rather than kept (and renewed).
    await spec.giveBack(hold).catch((error: unknown) => {
      if (!(error instanceof LockLostError)) ctx.backgroundError(error);
    });
    throw spec.signal.reason;
  }
  return hold;
}

async function waitLoop(ctx: EngineContext, spec: WaitSpec): Promise<Hold | undefined> {
  const waitUntil = spec.waitMs === undefined ? Number.POSITIVE_INFINITY : monotonicNow() + spec.waitMs;
  // Tasks of this process queue behind the ones already waiting (no barging):
  // a releasing task that locks again at once must not starve them.
  const queueBehind = !spec.reentry && spec.waitMs !== 0 && ctx.queues.hasWaiters(spec.channel);
  let retryInMs = ctx.maxSleepMs;
  if (!queueBehind) {
    const first = await spec.tryOnce();
    if ('hold' in first) return first.hold;
    if (spec.waitMs === 0) return undefined;
    retryInMs = first.retryInMs;
  }

  let waiter: Waiter | undefined;
  let acquired = false;
  try {
    waiter = await ctx.queues.join(spec);
    // The subscription is acknowledged: a release from now on cannot be
    // missed, so one more try closes the gap since the first one.
    let tryNow = !queueBehind;
    for (;;) {
      if (tryNow && (!spec.headOnly || waiter.isHead)) {
        const result = await spec.tryOnce();
        if ('hold' in result) {
          acquired = true;
          // Branches of one task share its ownership: those waiting beside this
          // one can reenter now instead of sleeping until the next release.
          ctx.queues.wakeSiblings(waiter);
          return result.hold;
        }
        retryInMs = result.retryInMs;
      }
      const remaining = waitUntil - monotonicNow();
      if (remaining <= 0) return undefined;
      const sleepMs =
        spec.headOnly && !waiter.isHead
          ? remaining // until its turn
          : Math.min(retryInMs >= 0 ? Math.max(1, retryInMs) : ctx.maxSleepMs, ctx.maxSleepMs, remaining);
      await waiter.sleep(sleepMs, spec.signal);
      if (waiter.queue.closedError) throw waiter.queue.closedError;
      tryNow = true;
    }
  } finally {
    if (waiter) ctx.queues.leave(waiter, acquired);
  }
}
