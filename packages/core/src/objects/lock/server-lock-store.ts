import { replicated, type Deployment } from '../../connection/deployment.js';
import type { AcquireReply } from '../../engine/acquire.js';
import type { Hold } from '../../engine/hold.js';
import type { ReleaseReply } from '../../engine/release.js';
import type { RenewableHold, RenewOutcome } from '../../engine/renewal.js';
import { DEFAULT_DRIFT_FACTOR } from '../../connection/time.js';
import type { WaitQueue } from '../../engine/wait-queue.js';
import type { LockRequest } from '../lock-options.js';
import { isOne, ObjectStore, renewOutcome } from '../object-store.js';
import { SCRIPTS } from '../scripts.generated.js';
import { keysOfLock, type LockKeys } from './keys.js';
import type { LockStore, OwnerHoldRead } from './lock-store.js';
import { readValueAndPttl } from './read-lease.js';

const isGranted = (reply: { readonly granted: boolean }): boolean => reply.granted;

/** Renewal kind of a reentrant lock's holds on one deployment. */
export const LOCK_KIND = 'lock';

// Replies are read by functions made once, not a closure per call. The fair
// lock's scripts answer as the lock's do (a queued refusal names no holder: '').
export function parseAcquire(reply: unknown): AcquireReply {
  const [code, second, third] = reply as [number, string | number | undefined, number | string | undefined];
  if (code === 1) return { granted: true, token: String(second), count: Number(third) };
  // A cancelled op was refused: try again at once (with a new op).
  if (code === -1) return { granted: false, retryInMs: 0 };
  return { granted: false, retryInMs: Number(second), holder: String(third ?? '') };
}

export function parseRelease(reply: unknown): ReleaseReply {
  const [code, second, third] = reply as [number, number, number?];
  if (code === 1) return { released: true, remaining: Number(second), receivers: Number(third ?? 0) };
  return { released: false, reason: second === 1 ? 'taken' : 'expired' };
}

const asCodes = (reply: unknown): number[] => reply as number[];

/**
 * The reentrant lock's protocol on one deployment: its scripts (one per state
 * change) and its reads, every call through the deployment's transport
 * (batched, bounded by commandTimeoutMs, typed errors). Used by the
 * single-server client.
 */
export class ServerLockStore extends ObjectStore implements LockStore {
  readonly counting = 'server';
  readonly driftFactor = DEFAULT_DRIFT_FACTOR;
  readonly headOnly = false;
  readonly kind = LOCK_KIND;
  readonly object: string;
  private opCounter = 0;

  constructor(
    deployment: Deployment,
    replayWindowMs: number,
    /** acquire-3's kind: '' counts an owner's acquisitions; 'nonReentrantLock' refuses its second. */
    private readonly lockKind: '' | 'nonReentrantLock' = '',
  ) {
    super(deployment, replayWindowMs);
    this.object = lockKind === 'nonReentrantLock' ? 'non_reentrant_lock' : 'lock';
  }

  acquire(keys: LockKeys, owner: string, leaseMs: number, op: string, _request?: LockRequest): Promise<AcquireReply> {
    const reply = this.transport.run(
      SCRIPTS.lockAcquire,
      { lock: keys.lock, fence: keys.fence, cancelled: keys.cancelled, owner, leaseMs, op, kind: this.lockKind },
      'acquire',
      keys.lock,
      parseAcquire,
    );
    return this.replicated(reply, keys.lock);
  }

  /** The arguments the lock's and the fair lock's cancel scripts share beside their keys and channel. */
  protected cancelArgs(owner: string, op: string, all: boolean) {
    return { owner, op: `${op}/cancel`, acquireOp: op, all: all ? '1' : '0', replayWindowMs: this.replayWindowMs, sharded: this.sharded };
  }

  /** The arguments the lock's and the fair lock's release scripts share beside their keys and channel. */
  protected releaseArgs(owner: string, token: string | undefined, op: string, all: boolean) {
    return { owner, op, all: all ? '1' : '0', token: token ?? '', replayWindowMs: this.replayWindowMs, sharded: this.sharded };
  }

  /**
   * With `syncReplicas`, a grant counts once enough replicas have it: a
   * rejection here makes the engine undo the grant (nothing is left).
   */
  protected replicated<T extends { readonly granted: boolean }>(reply: Promise<T>, key: string): Promise<T> {
    return replicated(this.deployment, key, reply, isGranted);
  }

  /** Cancels acquire `op` of `owner` (one count, or all of them). */
  cancel(keys: LockKeys, owner: string, op: string, all = false): Promise<boolean> {
    return this.transport.run(
      SCRIPTS.lockCancel,
      { lock: keys.lock, released: keys.released, cancelled: keys.cancelled, channel: keys.channel, ...this.cancelArgs(owner, op, all) },
      'cancel',
      keys.lock,
      isOne,
    );
  }

  release(keys: LockKeys, hold: Hold, op: string, all = false): Promise<ReleaseReply> {
    return this.releaseAs(keys, hold.owner, hold.token, op, all);
  }

  /** One release of `owner`'s hold (with `token`, when given: never a newer hold). */
  releaseAs(keys: LockKeys, owner: string, token: string | undefined, op: string, all: boolean): Promise<ReleaseReply> {
    return this.transport.run(
      SCRIPTS.lockRelease,
      { lock: keys.lock, released: keys.released, channel: keys.channel, ...this.releaseArgs(owner, token, op, all) },
      'release',
      keys.lock,
      parseRelease,
    );
  }

  async finishRelease(keys: LockKeys, hold: Hold, op: string): Promise<'released' | 'gone'> {
    const reply = await this.release(keys, hold, op, true);
    return reply.released ? 'released' : 'gone';
  }

  onMessage(_payload: string, queue: WaitQueue): void {
    // 'unlock' and 'force' both free the lock: one local waiter tries.
    queue.released();
  }

  batchKey(hold: RenewableHold): string {
    return this.deployment.batchKey(hold.key);
  }

  /** Renews a batch of holds of one server (or slot) in one script call. */
  async renew(holds: readonly RenewableHold[]): Promise<RenewOutcome[]> {
    const codes = await this.renewItems(holds.map((hold) => ({ key: hold.key, owner: hold.owner, token: hold.token ?? '', leaseMs: hold.leaseMs })));
    return this.renewed(codes, holds[0]?.key ?? '');
  }

  async extend(hold: Hold, leaseMs: number): Promise<'renewed' | 'gone' | 'taken'> {
    const [code] = await this.renewItems([{ key: hold.key, owner: hold.owner, token: hold.token ?? '', leaseMs }]);
    return renewOutcome(code);
  }

  /** One renew-n call; one code per item: 1 renewed, 0 gone, −1 taken. */
  renewItems(items: readonly { key: string; owner: string; token: string; leaseMs: number }[]): Promise<number[]> {
    return this.transport.run(SCRIPTS.lockRenew, { items }, `renew of ${items.length} holds`, items[0]?.key ?? '', asCodes);
  }

  async clear(hold: Hold): Promise<boolean> {
    const reply = await this.release(keysOfHold(hold), hold, `clear/${++this.opCounter}`, true);
    return reply.released;
  }

  isLocked(keys: LockKeys): Promise<boolean> {
    return this.transport.call('exists', [keys.lock], 'EXISTS', keys.lock, isOne);
  }

  async ownerHold(keys: LockKeys, _name: string, owner: string): Promise<OwnerHoldRead> {
    const holder = await this.readHolder(keys);
    return holder?.owner === owner ? { held: true, count: holder.count } : { held: false, count: 0 };
  }

  /** owner and count of the hold, or undefined when free. */
  readHolder(keys: LockKeys): Promise<{ owner: string; count: number } | undefined> {
    return this.transport.call('hmget', [keys.lock, 'owner', 'count'], 'a read', keys.lock, (reply) => {
      const [owner, count] = reply as [string | null, string | null];
      // A fair lock's hold handed over and not yet counted there (count 0) is one.
      return owner ? { owner, count: Math.max(1, Number(count)) } : undefined;
    });
  }

  /** Who holds the lock and its PTTL, read atomically (MULTI), so the TTL is that holder's. */
  async readLease(keys: LockKeys): Promise<{ owner: string | undefined; pttlMs: number }> {
    const { value, pttlMs } = await readValueAndPttl(this.deployment, this.transport.timeoutMs, keys.lock, 'owner');
    return { owner: value, pttlMs };
  }

  pttl(keys: LockKeys): Promise<number> {
    return this.transport.call('pttl', [keys.lock], 'PTTL', keys.lock, Number);
  }

  forceUnlock(keys: LockKeys): Promise<boolean> {
    return this.transport.run(
      SCRIPTS.lockForceUnlock,
      { lock: keys.lock, sharded: this.sharded, channel: keys.channel, notices: keys.notices },
      'forceUnlock',
      keys.lock,
      isOne,
    );
  }
}

/** The keys a release of `hold` needs, from its lock key. */
export function keysOfHold(hold: Hold): LockKeys {
  return keysOfLock(hold.key);
}
