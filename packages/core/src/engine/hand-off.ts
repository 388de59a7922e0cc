import { recordGrant } from './acquire.js';
import type { EngineContext } from './engine-context.js';
import type { Hold, HoldTarget } from './hold.js';
import { driftMs, leaseDeadline, monotonicNow } from './time.js';

/** How much of a fixed lease may have gone by (since the ticket try) for a hand-off to be taken without a try. */
const MAX_LEASE_SPENT = 0.1;

/**
 * The object data of a hold that a release handed over in Redis and that no
 * script of the owner has counted yet (a fair lock's count 0): the owner's
 * next acquire there must first claim it (see {@link claimHandOff}).
 */
export const HANDED_OVER = Symbol('handed over, not yet counted in Redis');

/** A lock a release handed to this waiter in Redis. */
export interface HandOffSpec {
  readonly target: HoldTarget;
  /** The hold's fencing token, as the hand-off named it. */
  readonly token: string;
  /** When the waiter's try that set its waiter lease (the ticket) was sent, monotonic ms. */
  readonly ticketSentAt: number;
  /** The waiter lease that try set, ms. */
  readonly waiterLeaseMs: number;
  /** Fixed lease in ms the call asked for (and its ticket carried); undefined: a watchdog lease. */
  readonly leaseMs: number | undefined;
  readonly maxLeaseMs?: number | undefined;
}

/**
 * Records a hand-off as the call's hold. The grant's TTL on the server ends at
 * the earlier of the ticket's lease and waiter lease, both counted from when
 * the ticket try ran, after it was sent: so the hold counts min(lease, waiter
 * lease) from that send, and its deadline falls before the server's expiry.
 * Undefined when it cannot be taken here, and the call tries instead (a try
 * claims a hand-off that is its owner's): its deadline has passed already (the
 * waiter slept through it), more than a tenth of a fixed lease is gone, or an
 * operation of the owner on this lock is out (a branch of the task trying: its
 * answer, a claim or a refusal, comes first).
 */
export function takeHandOff(ctx: EngineContext, spec: HandOffSpec): Hold | undefined {
  const { target } = spec;
  if (ctx.chains.busy(target.key, target.owner)) return undefined;
  const leaseMs = spec.leaseMs ?? ctx.watchdogTimeoutMs;
  // The send time from which `leaseMs` ends where min(lease, waiter lease) from the ticket does.
  const sentAt = spec.ticketSentAt + Math.min(0, (spec.waiterLeaseMs - leaseMs) * (1 - target.driftFactor));
  const left = leaseDeadline(sentAt, leaseMs, target.driftFactor) - monotonicNow();
  // A fixed lease is the caller's to count on: taken here only with most of it
  // left (an old ticket, or a lease beyond the waiter lease, would shorten
  // it); else the try claims it, which starts the whole lease again. A
  // watchdog lease needs a third left: the watchdog renews it within that.
  const needed = spec.leaseMs === undefined ? leaseMs / 3 : leaseMs - driftMs(leaseMs, target.driftFactor) - leaseMs * MAX_LEASE_SPENT;
  if (left <= needed) return undefined;
  return recordGrant(ctx, target, { granted: true, token: spec.token, count: 1, grant: HANDED_OVER }, sentAt, spec.leaseMs, spec.maxLeaseMs);
}

/**
 * Before an acquire of `owner` on `key` that would count on top of a hold
 * handed over and not yet counted in Redis (a reentry), counts it there: an
 * acquire with an op derived from the token, so that a claim whose answer was
 * lost is replayed, not counted twice. A claim that finds the hold gone marks
 * it lost (the acquire that follows is then a fresh one). Runs inside the
 * owner's turn.
 */
export async function claimHandOff(
  ctx: EngineContext,
  key: string,
  mode: string,
  owner: string,
  claim: (op: string) => Promise<{ readonly granted: boolean; readonly token?: string | undefined; readonly holder?: string }>,
): Promise<void> {
  const hold = ctx.holds.current(key, mode, owner);
  if (!hold?.active || hold.grant !== HANDED_OVER) return;
  const reply = await claim(`claim/${hold.token ?? ''}`);
  if (reply.granted && reply.token === hold.token) hold.grant = undefined;
  else hold.lose(!reply.granted && reply.holder ? 'taken' : 'expired');
}
