import type { Deployment } from '../../connection/deployment.js';
import type { AcquireReply } from '../../engine/attempt.js';
import type { Hold } from '../../engine/hold.js';
import type { HoldRegistry } from '../../engine/hold-registry.js';
import type { ReleaseReply } from '../../engine/release.js';
import type { RenewableHold, RenewOutcome } from '../../engine/renewal.js';
import { DEFAULT_DRIFT_FACTOR } from '../../connection/time.js';
import type { WaitQueue } from '../../engine/wait-queue.js';
import { IllegalMonitorStateError } from '../../errors.js';
import type { LockRequest } from '../lock-options.js';
import { isOne, ObjectStore } from '../object-store.js';
import { EXCLUSIVE_LOCK, type LockStore, type LockVariant, type OwnerHoldRead } from '../lock/lock-store.js';
import { parseAcquire as parseHoldAcquire, parseRelease } from '../lock/server-lock-store.js';
import { SCRIPTS } from '../scripts.generated.js';
import { keysOfRwLock, rwLockKeys, type RwLockKeys } from './keys.js';

/** Renewal kind of read-write lock holds (either mode). */
export const RW_KIND = 'rw-lock';

export type RwMode = 'read' | 'write';

/** The lock's replies, and −3: the write lock asked by a task that holds only the read lock. */
function parseAcquire(reply: unknown): AcquireReply {
  if ((reply as number[])[0] === -3)
    throw new IllegalMonitorStateError('the write lock was asked by a task that holds only the read lock (it would wait for itself)');
  return parseHoldAcquire(reply);
}

interface RenewItem {
  readonly key: string;
  readonly owner: string;
  readonly token: string | undefined;
  readonly leaseMs: number;
  readonly mode: string;
}

/** One mode of the read-write lock's protocol; `ReentrantLock` drives each mode as a lock. */
export class RwLockStore extends ObjectStore implements LockStore<RwLockKeys> {
  readonly counting = 'server';
  readonly driftFactor = DEFAULT_DRIFT_FACTOR;
  readonly headOnly = false;
  readonly kind = RW_KIND;
  /** Readers share; a refused writer's tries renew its waiter lease. */
  readonly variant: LockVariant;
  private clears = 0;

  constructor(
    deployment: Deployment,
    readonly mode: RwMode,
    replayWindowMs: number,
    /** How long a refused writer holds new readers back without trying again, ms. */
    private readonly waiterLeaseMs: number,
  ) {
    super(deployment, replayWindowMs);
    const write = mode === 'write';
    this.variant = { ...EXCLUSIVE_LOCK, object: `${mode}_lock`, mode, exclusive: write, waitersKeepPlace: write };
  }

  keysOf(prefix: string, name: string): RwLockKeys {
    return rwLockKeys(prefix, name);
  }

  /** A task that holds only the read lock must not wait for the write lock: it would wait for itself. */
  beforeAcquire(holds: HoldRegistry, keys: RwLockKeys, owner: string): void {
    if (this.mode !== 'write' || holds.current(keys.lock, 'write', owner)?.active) return;
    if (holds.current(keys.lock, 'read', owner)?.active) {
      throw new IllegalMonitorStateError(
        `the write lock of "${keys.lock}" was asked by a task that holds only its read lock: release the read lock first (waiting would deadlock)`,
      );
    }
  }

  acquire(keys: RwLockKeys, owner: string, leaseMs: number, op: string, request?: LockRequest): Promise<AcquireReply> {
    const { lock: hash, readers, writers, fence, cancelled } = keys;
    const join = request?.waitMs === 0 ? '0' : '1';
    // One literal, no spread: on this hot path a spread costs more client CPU than the rest of the call.
    const args = { hash, readers, writers, fence, cancelled, owner, leaseMs, op, mode: this.mode, waiterLeaseMs: this.waiterLeaseMs, join };
    // With syncReplicas a grant counts once replicas have it (else the engine undoes it).
    return this.write(SCRIPTS.rwLockAcquire, args, 'acquire', hash, parseAcquire, (value) => value.granted);
  }

  cancel(keys: RwLockKeys, owner: string, op: string): Promise<boolean> {
    const { lock: hash, readers, writers, released, cancelled, channel } = keys;
    const { mode, replayWindowMs, sharded } = this;
    const args = { hash, readers, writers, released, cancelled, owner, op: `${op}/cancel`, acquireOp: op, mode, replayWindowMs, sharded, channel };
    return this.transport.run(SCRIPTS.rwLockCancel, args, 'cancel', hash, isOne);
  }

  async extend(hold: Hold, leaseMs: number): Promise<'renewed' | 'gone' | 'taken'> {
    const [outcome] = await this.renewItems([{ key: hold.key, owner: hold.owner, token: hold.token, leaseMs, mode: hold.mode }]);
    return outcome ?? 'taken';
  }

  release(keys: RwLockKeys, hold: Hold, op: string): Promise<ReleaseReply> {
    return this.releaseIn(keys, this.mode, hold.owner, hold.token, op, false);
  }

  /** One release in `mode`: this store's, or a hold's of either mode (clear). */
  private releaseIn(keys: RwLockKeys, mode: string, owner: string, token: string | undefined, op: string, all: boolean): Promise<ReleaseReply> {
    const { lock: hash, readers, writers, released, channel } = keys;
    const { replayWindowMs, sharded } = this;
    const args = { hash, readers, writers, released, owner, op, mode, all: all ? '1' : '0', token: token ?? '', replayWindowMs, sharded, channel };
    return this.transport.run(SCRIPTS.rwLockRelease, args, 'release', hash, parseRelease);
  }

  async finishRelease(keys: RwLockKeys, hold: Hold, op: string): Promise<'released' | 'gone'> {
    const reply = await this.releaseIn(keys, this.mode, hold.owner, hold.token, op, true);
    return reply.released ? 'released' : 'gone';
  }

  /** 'unlock' (a writer leaving, or the last reader) or 'force': every local waiter tries (readers may all enter); anything else is dropped. */
  onMessage(payload: string, queue: WaitQueue): boolean {
    if (payload !== 'unlock' && payload !== 'force') return false;
    queue.wakeAll('released');
    return true;
  }

  leaveQueue(keys: RwLockKeys, owner: string): Promise<boolean> {
    if (this.mode !== 'write') return Promise.resolve(false);
    return this.transport.run(
      SCRIPTS.rwLockLeaveQueue,
      { writers: keys.writers, owner, sharded: this.sharded, channel: keys.channel },
      'leaveQueue',
      keys.lock,
      isOne,
    );
  }

  batchKey(hold: RenewableHold): string {
    return this.deployment.batchKey(hold.key);
  }

  /** Renews holds of either mode (the store of one mode is the kind of both): one renew.lua call. */
  renew(holds: readonly RenewableHold[]): Promise<RenewOutcome[]> {
    return this.renewItems(holds.map((hold) => ({ key: hold.key, owner: hold.owner, token: hold.token, leaseMs: hold.leaseMs, mode: (hold as Hold).mode })));
  }

  private async renewItems(items: readonly RenewItem[]): Promise<RenewOutcome[]> {
    const holds = items.map(({ key, owner, token, leaseMs, mode }) => ({
      hash: key,
      readers: keysOfRwLock(key).readers,
      owner,
      token: token ?? '',
      leaseMs,
      mode,
    }));
    const codes = await this.transport.run(
      SCRIPTS.rwLockRenew,
      { items: holds },
      `renew of ${items.length} holds`,
      items[0]?.key ?? '',
      (reply) => reply as number[],
    );
    return this.renewed(codes, items[0]?.key ?? '');
  }

  /** Releases what is left of a hold of either mode (checked by owner and token). */
  async clear(hold: Hold): Promise<boolean> {
    const reply = await this.releaseIn(keysOfRwLock(hold.key), hold.mode, hold.owner, hold.token, `clear/${++this.clears}`, true);
    return reply.released;
  }

  async isLocked(keys: RwLockKeys): Promise<boolean> {
    const [mode, readers] = await Promise.all([
      this.transport.call('hget', [keys.lock, 'mode'], 'a read', keys.lock, (reply) => reply as string | null),
      this.transport.call('zcard', [keys.readers], 'a read', keys.lock, Number),
    ]);
    return this.mode === 'write' ? mode === 'write' : readers > 0;
  }

  async ownerHold(keys: RwLockKeys, _name: string, owner: string): Promise<OwnerHoldRead> {
    const fields = this.mode === 'write' ? ['w', 'wc'] : [`r:${owner}`, `r:${owner}`];
    const [first, count] = await this.transport.call('hmget', [keys.lock, ...fields], 'a read', keys.lock, (reply) => reply as (string | null)[]);
    const held = this.mode === 'write' ? first === owner : first !== null && first !== undefined;
    return held ? { held: true, count: Number(count) } : { held: false, count: 0 };
  }

  pttl(keys: RwLockKeys): Promise<number> {
    return this.transport.call('pttl', [keys.lock], 'PTTL', keys.lock, Number);
  }

  forceUnlock(keys: RwLockKeys): Promise<boolean> {
    return this.transport.run(
      SCRIPTS.rwLockForceUnlock,
      { hash: keys.lock, readers: keys.readers, sharded: this.sharded, channel: keys.channel, notices: keys.notices },
      'forceUnlock',
      keys.lock,
      isOne,
    );
  }
}
