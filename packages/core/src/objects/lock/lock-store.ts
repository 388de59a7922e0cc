import type { AcquireReply } from '../../engine/attempt.js';
import type { Hold, HoldTarget } from '../../engine/hold.js';
import type { HoldKind } from '../../engine/hold-kinds.js';
import type { HoldRegistry } from '../../engine/hold-registry.js';
import type { ReleaseReply } from '../../engine/release.js';
import type { WaitQueue } from '../../engine/wait-queue.js';
import type { WaitStrategy } from '../../engine/wait-call.js';
import type { LockKeys } from './keys.js';

/**
 * What a store's try is told of its call beyond the lease: made from the parsed options, one object per call and the same
 * for each of its tries (a store may key what it keeps of a call by it), never the options or the request themselves.
 */
export interface AcquireTerms {
  /** False when the call tries once: a refusal registers no waiter (nothing in Redis should wake or wait for it). */
  readonly waits: boolean;
  /** tryLock: give up at once when the outcome cannot be decided (Redlock: no quorum possible). */
  readonly failFast: boolean;
}

export interface OwnerHoldRead {
  readonly held: boolean;
  /** The owner's count where the store counts (0 when not held). */
  readonly count: number;
}

/**
 * What sets one lock of the family apart, as data: exclusive or shared, reentrant or once per owner, and where
 * its waiters keep their order. The store and its scripts take it; the engine reads nothing else of a variant.
 */
export interface LockVariant {
  /** `rlock.object` of its locks' metrics and channels. */
  readonly object: string;
  /** The registry mode of its holds ('' where a lock has one mode). */
  readonly mode: string;
  /** One owner at a time in its mode (false: owners share it). */
  readonly exclusive: boolean;
  /** An owner may acquire again while holding (false: its second acquisition waits, decided by the scripts). */
  readonly reentrant: boolean;
  /** Newcomers queue behind this process's waiters before trying (false where Redis keeps the order). */
  readonly queueLocally: boolean;
  /** A waiter's refused tries renew its place in Redis (a waiter lease), so each keeps a timed try of its own. */
  readonly waitersKeepPlace: boolean;
}

/** The exclusive reentrant lock, each process ordering its own waiters: the family's base, which variants change in part. */
export const EXCLUSIVE_LOCK: LockVariant = Object.freeze({
  object: 'lock',
  mode: '',
  exclusive: true,
  reentrant: true,
  queueLocally: true,
  waitersKeepPlace: false,
});

/**
 * A lock's state and protocol over its names `K`: one Redis (`ServerLockStore`) or a quorum of masters (Redlock).
 * Every mutation is one atomic script per server. The engine hands a store only the names its own `keysOf` made.
 */
export interface LockStore<K extends LockKeys = LockKeys> extends HoldKind {
  readonly variant: LockVariant;
  /** Where nested acquisitions are counted: `server` (in the hold record) or `client` (only the first and last reach Redis). */
  readonly counting: 'server' | 'client';
  /** Drift allowed per ms of lease. */
  readonly driftFactor: number;
  /** Only the head of a lock's local queue tries (Redlock: a process's own tasks would split the votes). */
  readonly headOnly: boolean;
  /** Its holds' kind in the client's renewal registry. */
  readonly kind: string;
  /** How its waiters learn they may try again. @default on the lock's channel */
  readonly waitStrategy?: WaitStrategy;
  keysOf(prefix: string, name: string): K;
  /** Leaves a queue kept in Redis when a call ends without the lock; a hold with `keptToken` stays, other hand-offs are given back. */
  leaveQueue?(keys: K, owner: string, keptToken?: string): Promise<unknown>;
  /** Refuses an acquisition before anything is sent (a mode that would wait for the owner's own hold). */
  beforeAcquire?(holds: HoldRegistry, keys: K, owner: string): void;
  /** One try for a lease of `leaseMs`; a store may answer a failure it expects to pass with a refusal to retry. */
  acquire(keys: K, owner: string, leaseMs: number, op: string, terms: AcquireTerms): Promise<AcquireReply>;
  /** Cancels the acquire `op`: whether it ran, will run late, or never arrives, it leaves no hold. */
  cancel(keys: K, owner: string, op: string): Promise<unknown>;
  /**
   * Extends a held lease to max(current, `leaseMs`); 'renewed' only within the new lease's validity.
   * @throws QuorumError (Redlock) when failures leave it undecided (the hold stands as it was)
   */
  extend(hold: Hold, leaseMs: number): Promise<'renewed' | 'gone' | 'taken'>;
  /** One release of `hold` (all of it where the client counts). */
  release(keys: K, hold: Hold, op: string): Promise<ReleaseReply>;
  /** One more try of a final release that failed (the same op): see ReleaseSpec.finish. */
  finishRelease(keys: K, hold: Hold, op: string): Promise<'released' | 'gone'>;
  /** What the lock's channel says to its waiters; false: not such a message. */
  onMessage(payload: string, queue: WaitQueue): boolean;
  /** A release's reply handed the lock to a waiter of this client (the head of a queue kept in Redis): that waiter is woken with it. */
  handedOver?(keys: K, reply: ReleaseReply): void;
  /**
   * A hand-off {@link handedOver} gave a waiter, recorded as `target`'s hold with the call's fixed lease and cap (undefined: none);
   * undefined where it does not count (the waiter tries).
   */
  takeHandOff?(target: HoldTarget, handOff: unknown, fixedLeaseMs: number | undefined, maxLeaseMs: number | undefined): Hold | undefined;
  isLocked(keys: K, name: string): Promise<boolean>;
  ownerHold(keys: K, name: string, owner: string): Promise<OwnerHoldRead>;
  /** Remaining lease in ms (−2 free, −1 no TTL), as PTTL. */
  pttl(keys: K, name: string): Promise<number>;
  /** True if it released a holder. */
  forceUnlock(keys: K, name: string): Promise<boolean>;
}
