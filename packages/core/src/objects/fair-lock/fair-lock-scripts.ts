import type { Deployment } from '../../connection/deployment.js';
import type { AcquireReply } from '../../engine/acquire.js';
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
  constructor(
    deployment: Deployment,
    replayWindowMs: number,
    /** How long a queued owner keeps its place without trying again, ms. */
    private readonly waiterLeaseMs: number,
    private readonly clientId: string,
  ) {
    super(deployment, replayWindowMs);
  }

  keysOf(prefix: string, name: string): FairLockKeys {
    return fairLockKeys(prefix, name, this.clientId);
  }

  private queueKeys(keys: FairLockKeys) {
    return { lock: keys.lock, fence: keys.fence, queue: keys.queue, waiters: keys.waiters, tickets: keys.tickets };
  }

  cancel(keys: FairLockKeys, owner: string, op: string): Promise<boolean> {
    return this.transport.run(
      SCRIPTS.fairLockCancel,
      {
        ...this.queueKeys(keys),
        released: keys.released,
        cancelled: keys.cancelled,
        wakePrefix: keys.wakePrefix,
        owner,
        op: `${op}/cancel`,
        acquireOp: op,
        all: '0',
        replayWindowMs: this.replayWindowMs,
        sharded: this.sharded,
      },
      'cancel',
      keys.lock,
      isOne,
    );
  }

  forceUnlock(keys: FairLockKeys): Promise<boolean> {
    return this.transport.run(
      SCRIPTS.fairLockForceUnlock,
      { ...this.queueKeys(keys), sharded: this.sharded, notices: keys.notices, wakePrefix: keys.wakePrefix },
      'forceUnlock',
      keys.lock,
      isOne,
    );
  }

  acquire(keys: FairLockKeys, owner: string, leaseMs: number, op: string, request: LockRequest | undefined, once: boolean): Promise<AcquireReply> {
    return this.transport.run(
      SCRIPTS.fairLockAcquire,
      {
        lock: keys.lock,
        fence: keys.fence,
        queue: keys.queue,
        waiters: keys.waiters,
        tickets: keys.tickets,
        cancelled: keys.cancelled,
        owner,
        leaseMs,
        op,
        waiterLeaseMs: this.waiterLeaseMs,
        // tryLock({ waitMs: 0 }) never queues.
        join: request?.waitMs === 0 ? '0' : '1',
        once: once ? '1' : '0',
      },
      'acquire',
      keys.lock,
      parseAcquire,
    );
  }

  release(keys: FairLockKeys, owner: string, token: string | undefined, op: string, all: boolean): Promise<ReleaseReply> {
    return this.transport.run(
      SCRIPTS.fairLockRelease,
      {
        lock: keys.lock,
        fence: keys.fence,
        queue: keys.queue,
        waiters: keys.waiters,
        tickets: keys.tickets,
        released: keys.released,
        wakePrefix: keys.wakePrefix,
        owner,
        op,
        all: all ? '1' : '0',
        token: token ?? '',
        replayWindowMs: this.replayWindowMs,
        sharded: this.sharded,
      },
      'release',
      keys.lock,
      parseRelease,
    );
  }

  leaveQueue(keys: FairLockKeys, owner: string, keptToken = ''): Promise<boolean> {
    return this.transport.run(
      SCRIPTS.fairLockLeaveQueue,
      { ...this.queueKeys(keys), owner, sharded: this.sharded, kept: keptToken, wakePrefix: keys.wakePrefix },
      'leaveQueue',
      keys.lock,
      isOne,
    );
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
