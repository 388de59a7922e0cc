import { replicated, type Deployment } from '../../connection/deployment.js';
import type { AcquireReply } from '../../engine/attempt.js';
import type { Hold, HoldTarget } from '../../engine/hold.js';
import type { ReleaseReply } from '../../engine/release.js';
import { DEFAULT_DRIFT_FACTOR } from '../../connection/time.js';
import type { WaitQueue } from '../../engine/wait-queue.js';
import { HoldStore, type RenewItem } from '../hold-store.js';
import { asCodes, isOne } from '../object-store.js';
import { SCRIPTS } from '../scripts.generated.js';
import type { LockKeys } from './keys.js';
import type { AcquireTerms, LockStore, LockVariant, OwnerHoldRead } from './lock-store.js';

const isGranted = (reply: { readonly granted: boolean }): boolean => reply.granted;

// Made once, not a closure per call. Every hold-record acquire script answers alike (a queued refusal names no holder: '').
// A grant of count 1 may come as the bare token, a full release as the bare receiver count (lock/acquire.lua,
// lock/release.lua: a Lua table reply costs Redis several times a scalar).
export function parseAcquire(reply: unknown): AcquireReply {
  if (typeof reply === 'string') return { granted: true, token: reply, count: 1 };
  const [code, second, third] = reply as [number, string | number | undefined, number | string | undefined];
  if (code === 1) return { granted: true, token: String(second), count: Number(third) };
  // A cancelled op was refused: try again at once (with a new op).
  if (code === -1) return { granted: false, retryInMs: 0 };
  return { granted: false, retryInMs: Number(second), holder: String(third ?? '') };
}

export function parseRelease(reply: unknown): ReleaseReply {
  if (typeof reply === 'number') return { released: true, remaining: 0, receivers: reply };
  const [code, second, third] = reply as [number, number, number?];
  if (code === 1) return { released: true, remaining: Number(second), receivers: Number(third ?? 0) };
  return { released: false, reason: second === 1 ? 'taken' : 'expired' };
}

/**
 * The scripts of one way of waiting for a lock kept as a hold record (includes/hold-record.lua): what the
 * variants of one Redis differ in beside their data, given to a {@link ServerLockStore}. What it shares with
 * the store is as LockStore's.
 */
export interface LockScripts<K extends LockKeys> extends Pick<LockStore<K>, 'keysOf' | 'cancel' | 'onMessage' | 'leaveQueue' | 'handedOver' | 'takeHandOff'> {
  /** `once`: the owner's second acquisition is refused and the hold marked (a variant that is not reentrant); `terms` as LockStore's. */
  acquire(keys: K, owner: string, leaseMs: number, op: string, terms: AcquireTerms, once: boolean): Promise<AcquireReply>;
  /** With `token`, never releases a newer hold; `all`, every count of the owner; `mode`, the hold's (one store clears its kind's every mode). */
  release(keys: K, owner: string, token: string | undefined, op: string, all: boolean, mode: string): Promise<ReleaseReply>;
  forceUnlock(keys: K): Promise<boolean>;
}

/**
 * A lock of the family on one deployment, composed of its variant (data) and its scripts: one script per state
 * change, and the reads and renewals every hold record shares. Its holds renew and clear under `variant.object`.
 */
export class ServerLockStore<K extends LockKeys> extends HoldStore implements LockStore<K> {
  readonly counting = 'server';
  readonly driftFactor = DEFAULT_DRIFT_FACTOR;
  readonly headOnly = false;
  readonly kind: string;
  /** The scripts' own, where their waiters keep a place in Redis (a method: the engine takes a store of any names). */
  leaveQueue?(keys: K, owner: string, keptToken?: string): Promise<unknown>;
  handedOver?(keys: K, reply: ReleaseReply): void;
  takeHandOff?(target: HoldTarget, handOff: unknown, fixedLeaseMs: number | undefined, maxLeaseMs: number | undefined): Hold | undefined;
  private readonly once: boolean;
  private clears = 0;

  constructor(
    deployment: Deployment,
    replayWindowMs: number,
    /** The client's: a hold to clear is named by its name. */
    private readonly keyPrefix: string,
    readonly variant: LockVariant,
    private readonly scripts: LockScripts<K>,
  ) {
    super(deployment, replayWindowMs);
    this.kind = variant.object;
    this.once = !variant.reentrant;
    if (scripts.leaveQueue) this.leaveQueue = scripts.leaveQueue.bind(scripts);
    if (scripts.handedOver) this.handedOver = scripts.handedOver.bind(scripts);
    if (scripts.takeHandOff) this.takeHandOff = scripts.takeHandOff.bind(scripts);
  }

  keysOf(prefix: string, name: string): K {
    return this.scripts.keysOf(prefix, name);
  }

  /** With `syncReplicas` a grant counts once enough replicas have it; a rejection makes the engine undo it. */
  acquire(keys: K, owner: string, leaseMs: number, op: string, terms: AcquireTerms): Promise<AcquireReply> {
    return replicated(this.deployment, keys.lock, this.scripts.acquire(keys, owner, leaseMs, op, terms, this.once), isGranted);
  }

  cancel(keys: K, owner: string, op: string): Promise<unknown> {
    return this.scripts.cancel(keys, owner, op);
  }

  release(keys: K, hold: Hold, op: string): Promise<ReleaseReply> {
    return this.scripts.release(keys, hold.owner, hold.token, op, false, hold.mode);
  }

  async finishRelease(keys: K, hold: Hold, op: string): Promise<'released' | 'gone'> {
    const reply = await this.scripts.release(keys, hold.owner, hold.token, op, true, hold.mode);
    return reply.released ? 'released' : 'gone';
  }

  onMessage(payload: string, queue: WaitQueue): boolean {
    return this.scripts.onMessage(payload, queue);
  }

  forceUnlock(keys: K): Promise<boolean> {
    return this.scripts.forceUnlock(keys);
  }

  /** One lock/renew.lua call. */
  protected renewItems(items: readonly RenewItem[]): Promise<number[]> {
    return this.transport.run(SCRIPTS.lockRenew, { items }, `renew of ${items.length} holds`, items[0]?.key ?? '', asCodes);
  }

  /** Releases what is left of `hold` by owner and token, through the variant's own release (which wakes its waiters its way). */
  async clear(hold: Hold): Promise<boolean> {
    return (await this.finishRelease(this.keysOf(this.keyPrefix, hold.name), hold, `clear/${++this.clears}`)) === 'released';
  }

  isLocked(keys: K): Promise<boolean> {
    return this.transport.call('exists', [keys.lock], 'EXISTS', keys.lock, isOne);
  }

  async ownerHold(keys: K, _name: string, owner: string): Promise<OwnerHoldRead> {
    // The owner's field of the hash (hold-record.lua); a key of another type answers WRONGTYPE.
    const count = await this.transport.call('hget', [keys.lock, owner], 'a read', keys.lock, (reply) => (reply === null ? undefined : Number(reply)));
    // A hold handed over and not yet counted (count 0) is one.
    return count === undefined ? { held: false, count: 0 } : { held: true, count: Math.max(1, count) };
  }

  pttl(keys: K): Promise<number> {
    return this.transport.call('pttl', [keys.lock], 'PTTL', keys.lock, Number);
  }
}
