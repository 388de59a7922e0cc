import type { Deployment } from '../../connection/deployment.js';
import type { AcquireReply } from '../../engine/acquire.js';
import type { EngineContext } from '../../engine/engine-context.js';
import type { ReleaseReply } from '../../engine/release.js';
import type { WaitQueue } from '../../engine/wait-queue.js';
import type { LockRequest } from '../lock-options.js';
import { parseAcquire, parseRelease, type LockScripts } from '../lock/server-lock-store.js';
import { isOne, ObjectStore } from '../object-store.js';
import { isToken } from '../messages.js';
import { SCRIPTS } from '../scripts.generated.js';
import { fairLockKeys, type FairLockKeys } from './keys.js';

/**
 * The fair lock's scripts (fair-lock/*.lua): a waiter queue in Redis; a refused try joins or renews its place,
 * only the head gets a free lock. A release hands it to the head in the same script and tells only the head's
 * client: one release wakes one waiter, whose next try claims it (the grant and token come from that reply).
 * Newcomers try at once (their first try is their place), and a queued waiter's tries renew its waiter lease.
 */
export class FairLockScripts extends ObjectStore implements LockScripts<FairLockKeys> {
  /** How long a queued owner keeps its place without trying again: a watchdog lease, renewed by its tries (at least every third of it). */
  private readonly waiterLeaseMs: number;
  private readonly clientId: string;

  constructor(deployment: Deployment, context: EngineContext) {
    super(deployment, context.commandTimeoutMs);
    this.waiterLeaseMs = context.watchdogTimeoutMs;
    this.clientId = context.clientId;
  }

  keysOf(prefix: string, name: string): FairLockKeys {
    return fairLockKeys(prefix, name, this.clientId);
  }

  cancel(keys: FairLockKeys, owner: string, acquireOp: string): Promise<boolean> {
    const { lock, released, cancelled, fence, queue, waiters, tickets, wakePrefix } = keys;
    const { replayWindowMs, sharded } = this;
    const op = `${acquireOp}/cancel`;
    const args = { lock, released, cancelled, fence, queue, waiters, tickets, owner, op, acquireOp, all: '0', replayWindowMs, sharded, wakePrefix };
    return this.transport.run(SCRIPTS.fairLockCancel, args, 'cancel', lock, isOne);
  }

  forceUnlock({ lock, fence, queue, waiters, tickets, notices, wakePrefix }: FairLockKeys): Promise<boolean> {
    const args = { lock, fence, queue, waiters, tickets, sharded: this.sharded, notices, wakePrefix };
    return this.transport.run(SCRIPTS.fairLockForceUnlock, args, 'forceUnlock', lock, isOne);
  }

  acquire(keys: FairLockKeys, owner: string, leaseMs: number, op: string, request: LockRequest | undefined, once: boolean): Promise<AcquireReply> {
    const { lock, fence, cancelled, queue, waiters, tickets } = keys;
    // tryLock({ waitMs: 0 }) never queues.
    const join = request?.waitMs === 0 ? '0' : '1';
    const args = { lock, fence, cancelled, queue, waiters, tickets, owner, leaseMs, op, waiterLeaseMs: this.waiterLeaseMs, join, once: once ? '1' : '0' };
    return this.transport.run(SCRIPTS.fairLockAcquire, args, 'acquire', lock, parseAcquire);
  }

  release(keys: FairLockKeys, owner: string, token: string | undefined, op: string, all: boolean): Promise<ReleaseReply> {
    const { lock, released, fence, queue, waiters, tickets, wakePrefix } = keys;
    const { replayWindowMs, sharded } = this;
    const args = { lock, released, fence, queue, waiters, tickets, owner, op, all: all ? '1' : '0', token: token ?? '', replayWindowMs, sharded, wakePrefix };
    return this.transport.run(SCRIPTS.fairLockRelease, args, 'release', lock, parseRelease);
  }

  leaveQueue({ lock, fence, queue, waiters, tickets, wakePrefix }: FairLockKeys, owner: string, keptToken = ''): Promise<boolean> {
    const args = { lock, fence, queue, waiters, tickets, owner, sharded: this.sharded, kept: keptToken, wakePrefix };
    return this.transport.run(SCRIPTS.fairLockLeaveQueue, args, 'leaveQueue', lock, isOne);
  }

  /**
   * "<owner> <token> <ticket op>" on this client's channel (grant-head.lua) wakes that owner's waiter, which tries: the
   * message is a hint anyone who may PUBLISH can forge, so nothing in it is taken as a grant. False: not such a message.
   */
  onMessage(payload: string, queue: WaitQueue): boolean {
    const owner = handOffOwner(payload, this.clientId);
    if (owner === undefined) return false;
    queue.wakeId(owner);
    return true;
  }
}

/** A hand-off's owner, when `payload` reads "<clientId>:<taskId> <token> <op>" with this client's id and a decimal token; else undefined. */
export function handOffOwner(payload: string, clientId: string): string | undefined {
  const match = HAND_OFF.exec(payload);
  const owner = match?.[1];
  if (owner === undefined || !owner.startsWith(`${clientId}:`) || !isToken(match?.[2] ?? '')) return undefined;
  return owner;
}

/** What grant-head.lua publishes: the owner (no space in a client or task id), the token, the ticket op ('' when the ticket was gone). */
const HAND_OFF = /^(\S+) (\S+) (\S*)$/;
