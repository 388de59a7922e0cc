import { recordGrant, type AcquireReply } from '../../engine/acquire.js';
import type { EngineContext } from '../../engine/engine-context.js';
import type { Hold, HoldTarget } from '../../engine/hold.js';
import { driftMs, leaseDeadline, monotonicNow } from '../../connection/time.js';
import type { HandOffs } from '../lock/lock-store.js';

/** How much of a fixed lease may be gone (since the ticket try) for a hand-off to be taken without a try. */
const MAX_LEASE_SPENT = 0.1;

/** A hold handed over in Redis and not yet counted there (count 0): the owner's next acquire claims it first. */
const HANDED_OVER = Symbol('handed over, not yet counted in Redis');

/** A hand-off as its message reads. */
export interface HandOff {
  readonly token: string;
  /** The op of the try whose waiter lease the grant's TTL ends with: the grant is this call's if that try was. */
  readonly ticket: string;
  /** The grant's TTL ends at least this long after the try was sent, ms. */
  readonly waiterLeaseMs: number;
}

interface HandOffSpec {
  readonly target: HoldTarget;
  readonly token: string;
  /** When the ticket try was sent, monotonic ms. */
  readonly ticketSentAt: number;
  readonly waiterLeaseMs: number;
  /** Fixed lease the call asked for, ms; undefined: a watchdog lease. */
  readonly leaseMs: number | undefined;
  readonly maxLeaseMs?: number | undefined;
}

/**
 * Records a hand-off as the call's hold. The server's TTL ends min(lease, waiter lease) after the ticket try
 * ran, which was after its send: counted from that send, the deadline falls before the server's expiry.
 * Undefined (the call tries, claiming what is its own) when too little lease is left or an op of the owner is out.
 */
function takeHandOff(ctx: EngineContext, spec: HandOffSpec): Hold | undefined {
  const { target } = spec;
  if (ctx.chains.busy(target.key, target.owner)) return undefined;
  const leaseMs = spec.leaseMs ?? ctx.watchdogTimeoutMs;
  // The send time from which `leaseMs` ends where min(lease, waiter lease) from the ticket does.
  const sentAt = spec.ticketSentAt + Math.min(0, (spec.waiterLeaseMs - leaseMs) * (1 - target.driftFactor));
  const left = leaseDeadline(sentAt, leaseMs, target.driftFactor) - monotonicNow();
  // A fixed lease is taken only with most of it left, else the try claims it and starts it afresh;
  // a watchdog lease needs a third left, within which the watchdog renews it.
  const needed = spec.leaseMs === undefined ? leaseMs / 3 : leaseMs - driftMs(leaseMs, target.driftFactor) - leaseMs * MAX_LEASE_SPENT;
  if (left <= needed) return undefined;
  return recordGrant(ctx, target, { granted: true, token: spec.token, count: 1, grant: HANDED_OVER }, sentAt, spec.leaseMs, spec.maxLeaseMs);
}

/**
 * Before a reentry on a hold handed over and not yet counted in Redis, counts it there, with an op derived
 * from the token so a claim whose answer was lost is replayed, not counted twice. A claim that finds the
 * hold gone marks it lost. Runs inside the owner's turn.
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
 * One waiting call's side of the hand-off. The last acquire Redis refused and queued is the ticket a hand-off
 * names; it is taken only if no acquire of the task (any branch) was sent since, else it may be late or
 * predate an undone claim, and the call tries instead.
 */
export class HandOffCall implements HandOffs {
  private refused: { readonly op: string; readonly sentAt: number } | undefined;

  constructor(
    private readonly ctx: EngineContext,
    private readonly target: HoldTarget,
    private readonly channel: string,
    private readonly readGrant: (grant: string) => HandOff | undefined,
    private readonly request: { readonly leaseMs?: number | undefined; readonly maxLeaseMs?: number | undefined },
  ) {}

  /** `acquire` also sends the claim, with its own op. */
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
