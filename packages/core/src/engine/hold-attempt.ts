// A try for a leased hold, and how its grant is recorded: the attempt of every kind whose grant is a hold.
import type { EngineContext } from './engine-context.js';
import { Hold, type HoldTarget } from './hold.js';
import { leaseDeadline, monotonicNow } from '../connection/time.js';
import type { AcquireReply, AttemptSpec } from './attempt.js';

/** A try for a leased hold (a lock's, an expirable permit's), too late past lease − drift from its send. Made once per acquisition call. */
export class HoldAttempt<X = unknown> implements AttemptSpec<AcquireReply<X>, Hold> {
  readonly key: string;
  readonly owner: string;
  /** The lease each try asks for, ms: the fixed one, or the watchdog's. */
  readonly leaseMs: number;

  constructor(
    private readonly ctx: EngineContext,
    private readonly target: HoldTarget,
    /** Fixed lease in ms; undefined: a watchdog lease. */
    private readonly fixedLeaseMs: number | undefined,
    /** Cap on renewal in ms from the send (`maxLeaseMs`); undefined: none. */
    private readonly maxLeaseMs: number | undefined,
    private readonly acquire: (op: string, leaseMs: number) => Promise<AcquireReply<X>>,
    readonly undo: (op: string) => Promise<unknown>,
  ) {
    this.key = target.key;
    this.owner = target.owner;
    this.leaseMs = fixedLeaseMs ?? ctx.watchdogTimeoutMs;
  }

  send(op: string): Promise<AcquireReply<X>> {
    // The client's first holds: sent once its notice channel is subscribed, so a force-unlock of any grant is heard.
    const notices = this.ctx.noticesReady?.();
    return notices === undefined ? this.acquire(op, this.leaseMs) : notices.then(() => this.acquire(op, this.leaseMs));
  }

  refusal(reply: AcquireReply<X>): number | undefined {
    return reply.granted ? undefined : reply.retryInMs;
  }

  failure(reply: AcquireReply<X>): Error | undefined {
    return reply.granted ? undefined : reply.failure;
  }

  late(sentAt: number): boolean {
    return monotonicNow() >= leaseDeadline(sentAt, this.leaseMs, this.target.driftFactor);
  }

  keep(reply: AcquireReply<X>, sentAt: number): Hold {
    return recordGrant(this.ctx, this.target, reply as AcquireReply<X> & { granted: true }, sentAt, this.fixedLeaseMs, this.maxLeaseMs);
  }

  /** Counts a reentry of `hold` counted by the client, with this call's lease and cap; `sentAt`: when its extension was sent, if one was. */
  reentered(hold: Hold, sentAt: number | undefined): void {
    counted(this.ctx, hold, hold.count + 1, sentAt, this.fixedLeaseMs, this.maxLeaseMs);
  }
}

/**
 * Records a grant on the owner's hold, or a new one. A hold believed active that the grant shows gone (another token; in an
 * exclusive mode, another owner of this client granted) is lost first: one process never believes in two holders.
 */
export function recordGrant<G>(
  ctx: EngineContext,
  target: HoldTarget,
  reply: AcquireReply<G> & { granted: true },
  sentAt: number | undefined,
  fixedLeaseMs: number | undefined,
  /** The acquisition's cap on renewal (`maxLeaseMs`), counted from `sentAt`; undefined: none. */
  maxLeaseMs?: number,
): Hold {
  let hold = ctx.holds.current(target.key, target.mode, target.owner);
  if (hold?.active && reply.count !== undefined && hold.token !== reply.token) hold.lose('expired');
  if (target.exclusive) ctx.holds.loseOthers(target.key, target.mode, target.owner);
  if (!hold?.active) {
    const fresh = new Hold<G>(target, reply.token, ctx.holdSites, reply.grant);
    if (hold && hold.count > 0) fresh.previous = hold as Hold<G>;
    ctx.holds.set(fresh);
    hold = fresh;
  }
  return counted(ctx, hold, reply.count ?? hold.count + 1, sentAt, fixedLeaseMs, maxLeaseMs);
}

/** `hold` acquired `count` times, its lease the call's (the watchdog's, renewed, without a fixed one) and capped by its `maxLeaseMs`. */
function counted(ctx: EngineContext, hold: Hold, count: number, sentAt: number | undefined, fixedLeaseMs: number | undefined, maxLeaseMs?: number): Hold {
  hold.acquired(count, sentAt, fixedLeaseMs ?? ctx.watchdogTimeoutMs, fixedLeaseMs === undefined);
  if (maxLeaseMs !== undefined) hold.capLease((sentAt ?? monotonicNow()) + maxLeaseMs);
  ctx.acquired(hold);
  return hold;
}
