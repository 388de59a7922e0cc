import type { AcquireReply } from '../../engine/attempt.js';
import type { Hold, HoldTarget } from '../../engine/hold.js';
import type { HoldKind } from '../../engine/hold-kinds.js';
import type { HoldRegistry } from '../../engine/hold-registry.js';
import type { ReleaseReply } from '../../engine/release.js';
import type { WaitQueue } from '../../engine/wait-queue.js';
import type { WaitStrategy } from '../../engine/wait-strategy.js';
import type { LockRequest } from '../lock-options.js';
import type { LockKeys } from './keys.js';

export interface OwnerHoldRead {
  readonly held: boolean;
  /** The owner's count where the store counts (0 when not held). */
  readonly count: number;
}

/**
 * A reentrant lock's state and protocol: one Redis (`ServerLockStore`) or a quorum of masters (Redlock).
 * Every mutation is one atomic script per server.
 */
export interface LockStore extends HoldKind {
  /** Where nested acquisitions are counted: `server` (in the hold record) or `client` (only the first and last reach Redis). */
  readonly counting: 'server' | 'client';
  /** Drift allowed per ms of lease. */
  readonly driftFactor: number;
  /** Only the head of a lock's local queue tries (Redlock: a process's own tasks would split the votes). */
  readonly headOnly: boolean;
  /** Newcomers queue behind this process's waiters before trying (false where Redis keeps the order). @default true */
  readonly queueLocally?: boolean;
  /** A waiter's refused tries renew its place in Redis (a waiter lease), so each keeps a timed try of its own. @default false */
  readonly waitersKeepPlace?: boolean;
  /** How its waiters learn they may try again. @default on the lock's channel */
  readonly waitStrategy?: WaitStrategy;
  /** Absent: the reentrant lock's names (lockKeys). */
  keysOf?(prefix: string, name: string): LockKeys;
  /** Leaves a queue kept in Redis when a call ends without the lock; a hold with `keptToken` stays, other hand-offs are given back. */
  leaveQueue?(keys: LockKeys, owner: string, keptToken?: string): Promise<unknown>;
  readonly kind: string;
  /** `rlock.object` of its locks' metrics and channels (`lock`, `fair_lock`, `read_lock`…). @default 'lock' */
  readonly object?: string;
  /** The registry mode of its holds ('' for a lock; 'read', 'write'). @default '' */
  readonly mode?: string;
  /** One owner at a time in its mode. @default true */
  readonly exclusive?: boolean;
  /** An owner may acquire again while holding (false: its second acquisition waits). @default true */
  readonly reentrant?: boolean;
  /** Refuses an acquisition before anything is sent (a reader asking for the write lock). */
  beforeAcquire?(holds: HoldRegistry, keys: LockKeys, owner: string): void;
  /** One try; a store may answer a failure it expects to pass with a refusal to retry. */
  acquire(keys: LockKeys, owner: string, leaseMs: number, op: string, request: LockRequest): Promise<AcquireReply>;
  /** Cancels the acquire `op`: whether it ran, will run late, or never arrives, it leaves no hold. */
  cancel(keys: LockKeys, owner: string, op: string): Promise<unknown>;
  /**
   * Extends a held lease to max(current, `leaseMs`); 'renewed' only within the new lease's validity.
   * @throws QuorumError (Redlock) when failures leave it undecided (the hold stands as it was)
   */
  extend(hold: Hold, leaseMs: number): Promise<'renewed' | 'gone' | 'taken'>;
  /** One release of `hold` (all of it where the client counts). */
  release(keys: LockKeys, hold: Hold, op: string): Promise<ReleaseReply>;
  /** One more try of a final release that failed (the same op): see ReleaseSpec.finish. */
  finishRelease(keys: LockKeys, hold: Hold, op: string): Promise<'released' | 'gone'>;
  /** The lock's channel wakes one waiter per release. */
  onMessage(payload: string, queue: WaitQueue): boolean;
  /** A release's reply handed the lock to a waiter of this client (a fair lock's head): that waiter is woken with it. */
  handedOver?(keys: LockKeys, reply: ReleaseReply): void;
  /** A hand-off {@link handedOver} gave a waiter, recorded as `target`'s hold for `request`; undefined where it does not count (the waiter tries). */
  takeHandOff?(target: HoldTarget, request: LockRequest, handOff: unknown): Hold | undefined;
  isLocked(keys: LockKeys, name: string): Promise<boolean>;
  ownerHold(keys: LockKeys, name: string, owner: string): Promise<OwnerHoldRead>;
  /** Remaining lease in ms (−2 free, −1 no TTL), as PTTL. */
  pttl(keys: LockKeys, name: string): Promise<number>;
  /** True if it released a holder. */
  forceUnlock(keys: LockKeys, name: string): Promise<boolean>;
}
