import { RedisUnavailableError } from '../errors.js';
import { recordGrant, type AcquireReply } from './acquire.js';
import type { EngineContext } from './engine-context.js';
import type { Hold, HoldTarget } from './hold.js';
import { leaseDeadline, monotonicNow } from './time.js';

/** A lock a release handed to this waiter in Redis, and how to claim it there. */
export interface HandOffSpec {
  readonly target: HoldTarget;
  /** The hold's fencing token, as the hand-off named it. */
  readonly token: string;
  /** When the waiter's try that set its waiter lease was sent (monotonic ms): the grant's TTL ends a waiter lease after that try ran. */
  readonly ticketSentAt: number;
  readonly waiterLeaseMs: number;
  /** Fixed lease in ms; undefined: a watchdog lease. */
  readonly leaseMs: number | undefined;
  readonly maxLeaseMs?: number | undefined;
  /** The claim: an acquire by the owner, which Redis answers with count 1 (or more, behind a sibling's) and the same token. */
  send(op: string, leaseMs: number): Promise<AcquireReply>;
  /** Cancels the claim `op` (it may have run) when its answer did not come. */
  undo(op: string): Promise<unknown>;
}

/**
 * Records a hand-off as a hold and claims it in Redis in the background.
 *
 * The grant's TTL on the server ends where the waiter lease set by the ticket
 * try ends: at least `waiterLeaseMs` after that try was sent. Until the claim
 * is answered the hold counts its lease from there (or from now, for a fixed
 * lease ending sooner), so its deadline falls before the server's expiry
 * whichever comes first, the provisional TTL or the claim's own lease. The
 * claim takes the owner's turn now, before the caller can release or reenter,
 * so Redis sees claim, then release. A grant whose deadline has already passed
 * (the waiter slept through it) is not counted on: undefined, and the caller
 * tries, which claims it with a fresh lease if it is still there.
 */
export function takeHandOff(ctx: EngineContext, spec: HandOffSpec): Hold | undefined {
  const { target } = spec;
  const leaseMs = spec.leaseMs ?? ctx.watchdogTimeoutMs;
  const now = monotonicNow();
  // The send time from which `leaseMs` ends no later than either lease:
  // deadline(s, L) = min(deadline(ticketSentAt, W), deadline(now, L)).
  const sentAt = Math.min(now, spec.ticketSentAt + (spec.waiterLeaseMs - leaseMs) * (1 - target.driftFactor));
  if (leaseDeadline(sentAt, leaseMs, target.driftFactor) <= now) return undefined;
  const reply = { granted: true as const, token: spec.token, count: 1 };
  const hold = recordGrant(ctx, target, reply, sentAt, spec.leaseMs, spec.maxLeaseMs);
  const turn = ctx.chains.enter(target.key, target.owner);
  const claim = (async () => {
    try {
      if (turn) await turn;
      const op = ctx.newOpId();
      const claimSentAt = monotonicNow();
      let answer: AcquireReply;
      try {
        answer = await spec.send(op, leaseMs);
      } catch (error) {
        // Unanswered, it may still run: undo it behind it, and stop counting
        // on a hold whose count Redis may not have.
        if (error instanceof RedisUnavailableError) await spec.undo(op).catch(() => undefined);
        hold.lose('unreachable');
        return;
      }
      if (!hold.active) return;
      if (answer.granted && answer.token === spec.token) {
        hold.extendTo(claimSentAt, leaseMs);
        // Redis's count after the claim: 1, or more behind a sibling branch's reentry.
        if (answer.count !== undefined) hold.count = answer.count;
      } else {
        hold.lose(!answer.granted && answer.holder ? 'taken' : 'expired');
      }
    } finally {
      ctx.chains.leave(target.key, target.owner);
    }
  })().catch((error: unknown) => ctx.backgroundError(error));
  ctx.background.track(claim);
  return hold;
}
