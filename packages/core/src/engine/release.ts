import { IllegalMonitorStateError } from '../errors.js';
import type { EngineContext } from './engine-context.js';
import type { Hold } from './hold.js';
import { driftMs } from '../connection/time.js';
import { releaseChannel, type LockChannelContext } from '../observability/channels.js';

/** What one release call answered. */
export type ReleaseReply =
  | {
      readonly released: true;
      /** The owner's count left (0: the hold is gone). */
      readonly remaining: number;
      /** On a full release: subscriber connections the announcement reached (waiting clients). */
      readonly receivers?: number;
    }
  | {
      readonly released: false;
      /** Gone before this release (`expired`), or held by another owner or token (`taken`). */
      readonly reason: 'taken' | 'expired';
    };

/** One release: the object's call, and how a failed final one is finished in the background. Called as methods of the spec (a class may implement it). */
export interface ReleaseSpec {
  send(op: string): Promise<ReleaseReply>;
  /** Retries a final release of unknown outcome with the same `op` (one that ran answers as it did); rejects to be tried again. */
  finish(op: string): Promise<'released' | 'gone'>;
  /** Told of a release that succeeded, in the reaction that settles it: a caller reads the reply without a `.then` (a promise) of its own. */
  released?(reply: ReleaseReply & { readonly released: true }): void;
}

/**
 * A lost hold is counted off without touching Redis (never a newer hold of the owner) and rejects with its loss. A failed
 * final release loses the hold (`unreachable`) and is finished in the background.
 * @throws IllegalMonitorStateError, LockLostError, or the failure of the call.
 */
export function releaseHold(ctx: EngineContext, hold: Hold | undefined, name: string, spec: ReleaseSpec): Promise<void> {
  // Not async: an async function with an await is two promises per release, each running the task context's hook.
  if (!hold || hold.count <= 0) {
    return Promise.reject(new IllegalMonitorStateError(`"${name}" is not held by the current task (nothing was released)`));
  }
  let final: boolean;
  try {
    // A fixed lease past its deadline may have been someone else's: the section may not have been exclusive.
    if (hold.expired) hold.lose('expired');
    if (!hold.active) {
      ctx.holds.dropOne(hold);
      throw hold.lostError ?? new IllegalMonitorStateError(`"${name}" is not held by the current task`);
    }
    ctx.assertOpen();
    final = hold.count <= 1;
  } catch (error) {
    return Promise.reject(error);
  }
  // See beginFinalRelease: a renewal racing it must not report a clean release as lost.
  if (final) hold.beginFinalRelease();
  const op = ctx.newOpId();
  const turn = ctx.chains.enter(hold.key, hold.owner);
  let sent: Promise<ReleaseReply>;
  try {
    sent = turn ? turn.then(() => spec.send(op)) : spec.send(op);
  } catch (error) {
    sent = Promise.reject(error);
  }
  return sent.then(
    (reply) => {
      ctx.chains.leave(hold.key, hold.owner);
      // Settled first: an optional call would skip evaluating its argument.
      const settled = settleRelease(ctx, hold, reply);
      spec.released?.(settled);
    },
    (error: unknown) => {
      ctx.chains.leave(hold.key, hold.owner);
      if (final) {
        hold.lose('unreachable', error);
        ctx.holds.dropOne(hold);
        finishInBackground(ctx, hold, () => spec.finish(op));
      }
      throw error;
    },
  );
}

/** What a release's reply makes of `hold`: the reply, or the loss it found. */
function settleRelease(ctx: EngineContext, hold: Hold, reply: ReleaseReply): ReleaseReply & { readonly released: true } {
  if (hold.active && reply.released) {
    hold.releasedOne(reply.remaining);
    if (reply.remaining === 0) {
      ctx.holds.remove(hold);
      ctx.reports.released(hold, 'unlock');
    }
    return reply;
  }
  // Found gone or another's, or lost while the release was in flight (deadline passed, forceUnlock): the holder must hear of it,
  // whatever the reply (a hold lost already stays lost as it was).
  if (!reply.released) hold.lose(reply.reason);
  ctx.holds.dropOne(hold);
  throw hold.endedError();
}

/** Retries a failed final release until confirmed or the lease has surely run out, then reports which. */
function finishInBackground(ctx: EngineContext, hold: Hold, finish: () => Promise<'released' | 'gone'>): void {
  let outcome: 'released' | 'gone' | undefined;
  // The lease runs out on the server by sentAt + lease (+ clock rate drift);
  // the hold's deadline is sentAt + lease − drift.
  const until = hold.deadline + 2 * driftMs(hold.leaseMs);
  void ctx.background
    .retry(
      async () => {
        outcome = await finish();
        return true;
      },
      { until, minDelayMs: Math.min(50, ctx.commandTimeoutMs), maxDelayMs: ctx.commandTimeoutMs },
    )
    .then((confirmed) => {
      if (ctx.background.stopped && !confirmed) return;
      ctx.reports.released(hold, confirmed && outcome === 'released' ? 'retry' : 'expiry');
    });
}

/** {@link releaseHold}, traced on `rlock:release` while it has subscribers. */
export function releaseTraced(ctx: EngineContext, object: string, hold: Hold | undefined, name: string, spec: ReleaseSpec): Promise<void> {
  if (!releaseChannel.hasSubscribers) return releaseHold(ctx, hold, name, spec);
  return releaseChannel.tracePromise(() => releaseHold(ctx, hold, name, spec), { object, name, owner: hold?.owner } satisfies LockChannelContext);
}
