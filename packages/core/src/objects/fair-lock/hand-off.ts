import { recordGrant, type AcquireReply } from '../../engine/acquire.js';
import type { EngineContext } from '../../engine/engine-context.js';
import type { Hold, HoldTarget } from '../../engine/hold.js';
import { driftMs, leaseDeadline, monotonicNow } from '../../connection/time.js';
import type { HandOffs } from '../lock/lock-store.js';

/** How much of a fixed lease may have gone by (since the ticket try) for a hand-off to be taken without a try. */
const MAX_LEASE_SPENT = 0.1;

/**
 * The object data of a hold that a release handed over in Redis and that no
 * script of the owner has counted yet (a fair lock's count 0): the owner's
 * next acquire there must first claim it (see {@link claimHandOff}).
 */
const HANDED_OVER = Symbol('handed over, not yet counted in Redis');

/** A lock a release handed to a waiter in Redis, as its message reads: the hold's token, the try it names, the waiter lease that try set. */
export interface HandOff {
  readonly token: string;
  /** The op of the waiter's try whose waiter lease the grant's TTL ends with: the grant is this call's if that try was. */
  readonly ticket: string;
  /** How long that try kept the waiter's place, ms: the grant's TTL ends at least this long after the try was sent. */
  readonly waiterLeaseMs: number;
}

/** A lock a release handed to this waiter in Redis. */
interface HandOffSpec {
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
 * Records a hand-off as the call's hold. The server's TTL ends at min(lease,
 * waiter lease) from when the ticket try ran, after its send: counted from
 * that send, the hold's deadline falls before the server's expiry. Undefined
 * (the call tries instead, which claims a hand-off that is its owner's) when
 * the deadline passed, more than a tenth of a fixed lease is gone, or an
 * operation of the owner on this lock is out (its answer comes first).
 */
function takeHandOff(ctx: EngineContext, spec: HandOffSpec): Hold | undefined {
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
function claimHandOff(
  ctx: EngineContext,
  key: string,
  mode: string,
  owner: string,
  claim: (op: string) => Promise<{ readonly granted: boolean; readonly token?: string | undefined; readonly holder?: string }>,
): Promise<void> | undefined {
  const hold = ctx.holds.current(key, mode, owner);
  // Nothing to claim (every try but a reentry's): no promise, no extra turn before the acquire.
  if (!hold?.active || hold.grant !== HANDED_OVER) return undefined;
  return claim(`claim/${hold.token ?? ''}`).then((reply) => {
    if (reply.granted && reply.token === hold.token) hold.grant = undefined;
    else hold.lose(!reply.granted && reply.holder ? 'taken' : 'expired');
  });
}

/**
 * One waiting call's side of the hand-off. Its acquires are noted as the
 * owner's latest try (after the claim of a hold handed over, not yet
 * counted); the last one Redis refused and queued is the ticket a hand-off to
 * this call names. A hand-off is taken only if it names that try and no
 * acquire of the task (any branch) was sent since: else it may be late or
 * predate an undone claim, and the call tries instead, claiming what is its own.
 */
export class HandOffCall implements HandOffs {
  private refused: { readonly op: string; readonly sentAt: number } | undefined;

  constructor(
    private readonly ctx: EngineContext,
    private readonly target: HoldTarget,
    /** The channel whose local queue the call waits in. */
    private readonly channel: string,
    private readonly readGrant: (grant: string) => HandOff | undefined,
    private readonly request: { readonly leaseMs?: number | undefined; readonly maxLeaseMs?: number | undefined },
  ) {}

  /** Sends acquire `op` (through `acquire`, which also sends the claim, with its own op). */
  async send(op: string, acquire: (op: string) => Promise<AcquireReply>): Promise<AcquireReply> {
    const { ctx, target } = this;
    const sentAt = monotonicNow();
    this.refused = undefined;
    ctx.queues.get(this.channel)?.noteTry(target.owner, op);
    const claiming = claimHandOff(ctx, target.key, target.mode, target.owner, acquire);
    if (claiming) await claiming;
    const reply = await acquire(op);
    // Refused and queued (not a tombstone's refusal): this try set the owner's place.
    if (!reply.granted && reply.holder !== undefined) this.refused = { op, sentAt };
    return reply;
  }

  /** The hold from a wake's payload, or undefined when the call should try instead. */
  take(payload: string): Hold | undefined {
    const { ctx, target, refused } = this;
    const handOff = this.readGrant(payload);
    if (!handOff || !refused || handOff.ticket !== refused.op || ctx.queues.get(this.channel)?.lastTry(target.owner) !== refused.op) return undefined;
    if (ctx.holds.current(target.key, target.mode, target.owner)?.active) return undefined;
    return takeHandOff(ctx, {
      target,
      token: handOff.token,
      ticketSentAt: refused.sentAt,
      waiterLeaseMs: handOff.waiterLeaseMs,
      leaseMs: this.request.leaseMs,
      maxLeaseMs: this.request.maxLeaseMs,
    });
  }
}
