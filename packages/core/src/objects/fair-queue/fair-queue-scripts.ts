import { leaseDeadline, monotonicNow } from '../../connection/time.js';
import type { AcquireReply } from '../../engine/attempt.js';
import type { Hold, HoldTarget } from '../../engine/hold.js';
import { recordGrant } from '../../engine/hold-attempt.js';
import type { ReleaseReply } from '../../engine/release.js';
import type { WaitQueue } from '../../engine/wait-queue.js';
import type { AcquireTerms, LockVariant } from '../lock/lock-store.js';
import { parseAcquire, parseRelease, type LockScripts } from '../lock/server-lock-store.js';
import { ContextStore, isOne } from '../object-store.js';
import { isToken } from '../messages.js';
import { SCRIPTS } from '../scripts.generated.js';
import { fairLockKeys, type FairLockKeys } from './keys.js';

/** What the queue makes of a lock variant: Redis keeps the order, so newcomers try at once and a waiter's tries renew its place. */
export const QUEUED_IN_REDIS: Pick<LockVariant, 'queueLocally' | 'waitersKeepPlace'> = Object.freeze({ queueLocally: false, waitersKeepPlace: true });

/** A hold handed over in Redis and not yet counted there (count 0), which its owner counts as one: a reentry counts both. */
const HANDED_OVER = Symbol('handed over, not yet counted in Redis');

/** A release's reply that handed the lock to a head of this client: the grant, and when the release was sent. */
interface HandOff {
  readonly owner: string;
  readonly token: string;
  /** The hold's TTL from the release script's run, ms: the head's own lease. */
  readonly leaseMs: number;
  /** Monotonic ms before the release was sent: the script, and so the TTL's start, came after. */
  readonly sentAt: number;
}

type FairReleaseReply = ReleaseReply & { readonly handOff?: HandOff };

/**
 * The fair locks' scripts (fair-queue/*.lua): a waiter queue in Redis, whose head alone gets a free lock; a release
 * hands it to the head in the same script. Another client's head is woken by a message and claims it with its next
 * try; the releasing client's own head is told by the release's reply. A queued waiter's tries renew its place.
 */
export class FairQueueScripts extends ContextStore implements LockScripts<FairLockKeys> {
  keysOf(prefix: string, name: string): FairLockKeys {
    return fairLockKeys(prefix, name, this.ctx.clientId);
  }

  cancel(keys: FairLockKeys, owner: string, acquireOp: string): Promise<boolean> {
    const { lock, released, cancelled, fence, queue, waiters, tickets, wakePrefix } = keys;
    const { replayWindowMs, sharded } = this;
    const op = `${acquireOp}/cancel`;
    const args = { lock, released, cancelled, fence, queue, waiters, tickets, owner, op, acquireOp, all: '0', replayWindowMs, sharded, wakePrefix };
    return this.transport.run(SCRIPTS.fairQueueCancel, args, 'cancel', lock, isOne);
  }

  forceUnlock({ lock, fence, queue, waiters, tickets, notices, wakePrefix }: FairLockKeys): Promise<boolean> {
    const args = { lock, fence, queue, waiters, tickets, sharded: this.sharded, notices, wakePrefix };
    return this.transport.run(SCRIPTS.fairQueueForceUnlock, args, 'forceUnlock', lock, isOne);
  }

  acquire(keys: FairLockKeys, owner: string, leaseMs: number, op: string, terms: Pick<AcquireTerms, 'waits'>, once: boolean): Promise<AcquireReply> {
    const { lock, fence, cancelled, queue, waiters, tickets } = keys;
    // tryLock({ waitMs: 0 }) never queues.
    const join = terms.waits ? '1' : '0';
    const handed = this.handedToken(lock, owner);
    // A queued owner keeps its place a watchdog lease without trying again (its tries renew it at least every third of it).
    const waiterLeaseMs = this.ctx.watchdogTimeoutMs;
    const args = { lock, fence, cancelled, queue, waiters, tickets, owner, leaseMs, op, waiterLeaseMs, join, handed, once: once ? '1' : '0' };
    return this.transport.run(SCRIPTS.fairQueueAcquire, args, 'acquire', lock, parseAcquire);
  }

  /** The token of the owner's hold when it is a hand-off not yet counted in Redis (a reentry counts it too), else ''. */
  private handedToken(lock: string, owner: string): string {
    const hold = this.ctx.holds.current(lock, '', owner);
    return hold?.active && hold.grant === HANDED_OVER ? (hold.token ?? '') : '';
  }

  release(keys: FairLockKeys, owner: string, token: string | undefined, op: string, all: boolean): Promise<ReleaseReply> {
    const { lock, released, fence, queue, waiters, tickets, wakePrefix } = keys;
    const { replayWindowMs, sharded } = this;
    const args = { lock, released, fence, queue, waiters, tickets, owner, op, all: all ? '1' : '0', token: token ?? '', replayWindowMs, sharded, wakePrefix };
    const sentAt = monotonicNow();
    return this.transport.run(SCRIPTS.fairQueueRelease, args, 'release', lock, (reply) => this.readRelease(reply, sentAt, keys, owner));
  }

  /**
   * A hand-off in the reply is given to its waiter once the caller settled the release ({@link handedOver}). A release
   * whose hold was lost meanwhile, or finished in the background, is not settled so: its head is woken here, and claims.
   */
  private readRelease(reply: unknown, sentAt: number, keys: FairLockKeys, owner: string): FairReleaseReply {
    const parsed = parseFairRelease(reply, sentAt);
    if (parsed.handOff === undefined || this.ctx.holds.current(keys.lock, '', owner)?.active === true) return parsed;
    this.ctx.queues.get(keys.channel)?.wakeId(parsed.handOff.owner);
    const { handOff: _woken, ...released } = parsed;
    return released;
  }

  /** Wakes the head the release handed the lock to, when it is this client's, with the grant (never with syncReplicas: a claim waits for replicas). */
  handedOver(keys: FairLockKeys, reply: FairReleaseReply): void {
    const handOff = reply.handOff;
    if (handOff === undefined) return;
    const queue = this.ctx.queues.get(keys.channel);
    if (this.deployment.syncsReplicas) queue?.wakeId(handOff.owner);
    else queue?.handTo(handOff.owner, handOff);
  }

  /**
   * A hand-off of this client's release, recorded as the waiter's hold when it is the lease the call asked for, still in time,
   * and nothing of the owner is out (a try in flight may claim it, or predate it). The hold stays count 0 in Redis: a
   * reentry counts it too (see {@link handedToken}), a release reads it as one.
   */
  takeHandOff(target: HoldTarget, handOff: unknown, fixedLeaseMs: number | undefined, maxLeaseMs: number | undefined): Hold | undefined {
    const { ctx } = this;
    const handed = handOff as HandOff;
    const leaseMs = fixedLeaseMs ?? ctx.watchdogTimeoutMs;
    if (handed.owner !== target.owner || handed.leaseMs !== leaseMs || ctx.chains.busy(target.key, target.owner)) return undefined;
    if (ctx.holds.current(target.key, target.mode, target.owner)?.active) return undefined;
    if (monotonicNow() >= leaseDeadline(handed.sentAt, leaseMs, target.driftFactor)) return undefined;
    const reply = { granted: true, token: handed.token, count: 1, grant: HANDED_OVER } as const;
    return recordGrant(ctx, target, reply, handed.sentAt, fixedLeaseMs, maxLeaseMs);
  }

  leaveQueue({ lock, fence, queue, waiters, tickets, wakePrefix }: FairLockKeys, owner: string, keptToken = ''): Promise<boolean> {
    const args = { lock, fence, queue, waiters, tickets, owner, sharded: this.sharded, kept: keptToken, wakePrefix };
    return this.transport.run(SCRIPTS.fairQueueLeaveQueue, args, 'leaveQueue', lock, isOne);
  }

  /**
   * "<owner> <token> <ticket op>" on this client's channel (grant-head.lua) wakes that owner's waiter, which tries: the
   * message is a hint anyone who may PUBLISH can forge, so nothing in it is taken as a grant. False: not such a message.
   */
  onMessage(payload: string, queue: WaitQueue): boolean {
    const owner = handOffOwner(payload, this.ctx.clientId);
    if (owner === undefined) return false;
    queue.wakeId(owner);
    return true;
  }
}

/** release.lua's reply; {1, 0, 0, head, token, leaseMs} handed the lock to a head of this client. */
function parseFairRelease(reply: unknown, sentAt: number): FairReleaseReply {
  const parsed = parseRelease(reply);
  // A replayed full release answers a bare 0 (release-count): no hand-off in it.
  if (!Array.isArray(reply)) return parsed;
  const [, , , owner, token, leaseMs] = reply as [number, number, number?, string?, (string | number)?, number?];
  if (!parsed.released || typeof owner !== 'string' || token === undefined || !isToken(String(token))) return parsed;
  return { ...parsed, handOff: { owner, token: String(token), leaseMs: Number(leaseMs), sentAt } };
}

/** A hand-off's owner, when `payload` reads "<clientId>:<taskId> <token> <op>" with this client's id and a decimal token; else undefined. */
export function handOffOwner(payload: string, clientId: string): string | undefined {
  const [, owner, token] = HAND_OFF.exec(payload) ?? [];
  return owner?.startsWith(`${clientId}:`) && isToken(token ?? '') ? owner : undefined;
}

/** What grant-head.lua publishes: the owner (no space in a client or task id), the token, the ticket op ('' when the ticket was gone). */
const HAND_OFF = /^(\S+) (\S+) (\S*)$/;
