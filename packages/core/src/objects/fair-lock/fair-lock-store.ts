import type { Deployment } from '../../connection/deployment.js';
import type { AcquireReply } from '../../engine/attempt.js';
import type { ReleaseReply } from '../../engine/release.js';
import type { WaitQueue } from '../../engine/wait-queue.js';
import type { LockRequest } from '../lock-options.js';
import type { LockKeys } from '../lock/keys.js';
import { parseAcquire, parseRelease, ServerLockStore } from '../lock/server-lock-store.js';
import { isOne } from '../object-store.js';
import { isToken } from '../messages.js';
import { SCRIPTS } from '../scripts.generated.js';
import { fairLockKeys, type FairLockKeys } from './keys.js';

/**
 * The reentrant lock's protocol plus a waiter queue in Redis: a refused try joins or renews its place, only
 * the head gets a free lock. A release hands it to the head in the same script and tells only the head's
 * client: one release wakes one waiter, whose next try claims it (the grant and token come from that reply).
 */
export class FairLockStore extends ServerLockStore {
  /** Newcomers try at once: their first try is their place in the queue. */
  readonly queueLocally = false;
  /** A queued waiter's tries renew its waiter lease. */
  readonly waitersKeepPlace = true;
  override readonly object = 'fair_lock';

  constructor(
    deployment: Deployment,
    replayWindowMs: number,
    /** How long a queued owner keeps its place without trying again, ms. */
    private readonly waiterLeaseMs: number,
    private readonly clientId: string,
  ) {
    super(deployment, replayWindowMs);
  }

  override keysOf(prefix: string, name: string): FairLockKeys {
    return fairLockKeys(prefix, name, this.clientId);
  }

  private queueKeys(fair: FairLockKeys) {
    return { lock: fair.lock, fence: fair.fence, queue: fair.queue, waiters: fair.waiters, tickets: fair.tickets };
  }

  override cancel(keys: LockKeys, owner: string, op: string, all = false): Promise<boolean> {
    const fair = keys as FairLockKeys;
    return this.transport.run(
      SCRIPTS.fairLockCancel,
      { ...this.queueKeys(fair), released: fair.released, cancelled: fair.cancelled, wakePrefix: fair.wakePrefix, ...this.cancelArgs(owner, op, all) },
      'cancel',
      fair.lock,
      isOne,
    );
  }

  override forceUnlock(keys: LockKeys): Promise<boolean> {
    const fair = keys as FairLockKeys;
    return this.transport.run(
      SCRIPTS.fairLockForceUnlock,
      { ...this.queueKeys(fair), sharded: this.sharded, notices: fair.notices, wakePrefix: fair.wakePrefix },
      'forceUnlock',
      fair.lock,
      isOne,
    );
  }

  override acquire(keys: LockKeys, owner: string, leaseMs: number, op: string, request?: LockRequest): Promise<AcquireReply> {
    const fair = keys as FairLockKeys;
    // tryLock({ waitMs: 0 }) never queues.
    const join = request?.waitMs === 0 ? '0' : '1';
    const reply = this.transport.run(
      SCRIPTS.fairLockAcquire,
      {
        lock: fair.lock,
        fence: fair.fence,
        queue: fair.queue,
        waiters: fair.waiters,
        tickets: fair.tickets,
        cancelled: fair.cancelled,
        owner,
        leaseMs,
        op,
        waiterLeaseMs: this.waiterLeaseMs,
        join,
      },
      'acquire',
      fair.lock,
      parseAcquire,
    );
    return this.replicated(reply, fair.lock);
  }

  override releaseAs(keys: LockKeys, owner: string, token: string | undefined, op: string, all: boolean): Promise<ReleaseReply> {
    const fair = keys as FairLockKeys;
    return this.transport.run(
      SCRIPTS.fairLockRelease,
      {
        lock: fair.lock,
        fence: fair.fence,
        queue: fair.queue,
        waiters: fair.waiters,
        tickets: fair.tickets,
        released: fair.released,
        wakePrefix: fair.wakePrefix,
        owner,
        op,
        all: all ? '1' : '0',
        token: token ?? '',
        replayWindowMs: this.replayWindowMs,
        sharded: this.sharded,
      },
      'release',
      fair.lock,
      parseRelease,
    );
  }

  leaveQueue(keys: LockKeys, owner: string, keptToken = ''): Promise<boolean> {
    const fair = keys as FairLockKeys;
    return this.transport.run(
      SCRIPTS.fairLockLeaveQueue,
      { ...this.queueKeys(fair), owner, sharded: this.sharded, kept: keptToken, wakePrefix: fair.wakePrefix },
      'leaveQueue',
      fair.lock,
      isOne,
    );
  }

  /**
   * "<owner> <token> <ticket op>" on this client's channel (grant-head.lua) wakes that owner's waiter, which tries: the
   * message is a hint anyone who may PUBLISH can forge, so nothing in it is taken as a grant. False: not such a message.
   */
  override onMessage(payload: string, queue: WaitQueue): boolean {
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
