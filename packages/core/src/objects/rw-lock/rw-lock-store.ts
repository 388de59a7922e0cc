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
import type { LockKeys } from '../lock/keys.js';
import type { LockStore, OwnerHoldRead } from '../lock/lock-store.js';
import { parseRelease } from '../lock/server-lock-store.js';
import { SCRIPTS } from '../scripts.generated.js';
import { keysOfRwLock, rwLockKeys, type RwLockKeys } from './keys.js';

/** Renewal kind of read-write lock holds (either mode). */
export const RW_KIND = 'rw-lock';

export type RwMode = 'read' | 'write';

function parseAcquire(reply: unknown): AcquireReply {
  const [code, second, third] = reply as [number, string | number | undefined, string | number | undefined];
  if (code === 1) return { granted: true, token: String(second), count: Number(third) };
  if (code === -3) throw new IllegalMonitorStateError('the write lock was asked by a task that holds only the read lock (it would wait for itself)');
  if (code === -1) return { granted: false, retryInMs: 0 };
  return { granted: false, retryInMs: Number(second), holder: String(third ?? '') };
}

interface RenewItem {
  readonly key: string;
  readonly owner: string;
  readonly token: string | undefined;
  readonly leaseMs: number;
  readonly mode: string;
}

/** One mode of the read-write lock's protocol; `ReentrantLock` drives each mode as a lock. */
export class RwLockStore extends ObjectStore implements LockStore {
  readonly counting = 'server';
  readonly driftFactor = DEFAULT_DRIFT_FACTOR;
  readonly headOnly = false;
  readonly kind = RW_KIND;
  readonly exclusive: boolean;
  /** A refused writer's tries renew its waiter lease. */
  readonly waitersKeepPlace: boolean;
  readonly object: 'read_lock' | 'write_lock';
  private clears = 0;

  constructor(
    deployment: Deployment,
    readonly mode: RwMode,
    replayWindowMs: number,
    /** How long a refused writer holds new readers back without trying again, ms. */
    private readonly waiterLeaseMs: number,
  ) {
    super(deployment, replayWindowMs);
    this.exclusive = mode === 'write';
    this.waitersKeepPlace = mode === 'write';
    this.object = mode === 'write' ? 'write_lock' : 'read_lock';
  }

  keysOf(prefix: string, name: string): RwLockKeys {
    return rwLockKeys(prefix, name);
  }

  /** A task that holds only the read lock must not wait for the write lock: it would wait for itself. */
  beforeAcquire(holds: HoldRegistry, keys: LockKeys, owner: string): void {
    if (this.mode !== 'write' || holds.current(keys.lock, 'write', owner)?.active) return;
    if (holds.current(keys.lock, 'read', owner)?.active) {
      throw new IllegalMonitorStateError(
        `the write lock of "${keys.lock}" was asked by a task that holds only its read lock: release the read lock first (waiting would deadlock)`,
      );
    }
  }

  acquire(keys: LockKeys, owner: string, leaseMs: number, op: string, request?: LockRequest): Promise<AcquireReply> {
    const rw = keys as RwLockKeys;
    const join = request?.waitMs === 0 ? '0' : '1';
    // One literal, no spread: on this hot path a spread costs more client CPU than the rest of the call.
    const args = {
      hash: rw.lock,
      readers: rw.readers,
      writers: rw.writers,
      fence: rw.fence,
      cancelled: rw.cancelled,
      owner,
      leaseMs,
      op,
      mode: this.mode,
      waiterLeaseMs: this.waiterLeaseMs,
      join,
    };
    // With syncReplicas a grant counts once replicas have it (else the engine undoes it).
    return this.write(SCRIPTS.rwLockAcquire, args, 'acquire', rw.lock, parseAcquire, (value) => value.granted);
  }

  cancel(keys: LockKeys, owner: string, op: string): Promise<boolean> {
    const rw = keys as RwLockKeys;
    return this.transport.run(
      SCRIPTS.rwLockCancel,
      {
        hash: rw.lock,
        readers: rw.readers,
        writers: rw.writers,
        released: rw.released,
        cancelled: rw.cancelled,
        owner,
        op: `${op}/cancel`,
        acquireOp: op,
        mode: this.mode,
        replayWindowMs: this.replayWindowMs,
        sharded: this.sharded,
        channel: rw.channel,
      },
      'cancel',
      rw.lock,
      isOne,
    );
  }

  async extend(hold: Hold, leaseMs: number): Promise<'renewed' | 'gone' | 'taken'> {
    const [outcome] = await this.renewItems([{ key: hold.key, owner: hold.owner, token: hold.token, leaseMs, mode: hold.mode }]);
    return outcome ?? 'taken';
  }

  release(keys: LockKeys, hold: Hold, op: string): Promise<ReleaseReply> {
    return this.releaseAs(keys, hold.owner, hold.token, op, false);
  }

  releaseAs(keys: LockKeys, owner: string, token: string | undefined, op: string, all: boolean): Promise<ReleaseReply> {
    return this.releaseIn(keys as RwLockKeys, this.mode, owner, token, op, all);
  }

  /** One release in `mode`: this store's, or a hold's of either mode (clear). */
  private releaseIn(rw: RwLockKeys, mode: string, owner: string, token: string | undefined, op: string, all: boolean): Promise<ReleaseReply> {
    return this.transport.run(
      SCRIPTS.rwLockRelease,
      {
        hash: rw.lock,
        readers: rw.readers,
        writers: rw.writers,
        released: rw.released,
        owner,
        op,
        mode,
        all: all ? '1' : '0',
        token: token ?? '',
        replayWindowMs: this.replayWindowMs,
        sharded: this.sharded,
        channel: rw.channel,
      },
      'release',
      rw.lock,
      parseRelease,
    );
  }

  async finishRelease(keys: LockKeys, hold: Hold, op: string): Promise<'released' | 'gone'> {
    const reply = await this.releaseAs(keys, hold.owner, hold.token, op, true);
    return reply.released ? 'released' : 'gone';
  }

  /** 'unlock' (a writer leaving, or the last reader) or 'force': every local waiter tries (readers may all enter); anything else is dropped. */
  onMessage(payload: string, queue: WaitQueue): boolean {
    if (payload !== 'unlock' && payload !== 'force') return false;
    queue.wakeAll('released');
    return true;
  }

  leaveQueue(keys: LockKeys, owner: string): Promise<boolean> {
    if (this.mode !== 'write') return Promise.resolve(false);
    const rw = keys as RwLockKeys;
    return this.transport.run(
      SCRIPTS.rwLockLeaveQueue,
      { writers: rw.writers, owner, sharded: this.sharded, channel: rw.channel },
      'leaveQueue',
      rw.lock,
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

  async isLocked(keys: LockKeys): Promise<boolean> {
    const [mode, readers] = await Promise.all([
      this.transport.call('hget', [keys.lock, 'mode'], 'a read', keys.lock, (reply) => reply as string | null),
      this.transport.call('zcard', [(keys as RwLockKeys).readers], 'a read', keys.lock, Number),
    ]);
    return this.mode === 'write' ? mode === 'write' : readers > 0;
  }

  async ownerHold(keys: LockKeys, _name: string, owner: string): Promise<OwnerHoldRead> {
    const fields = this.mode === 'write' ? ['w', 'wc'] : [`r:${owner}`, `r:${owner}`];
    const [first, count] = await this.transport.call('hmget', [keys.lock, ...fields], 'a read', keys.lock, (reply) => reply as (string | null)[]);
    const held = this.mode === 'write' ? first === owner : first !== null && first !== undefined;
    return held ? { held: true, count: Number(count) } : { held: false, count: 0 };
  }

  pttl(keys: LockKeys): Promise<number> {
    return this.transport.call('pttl', [keys.lock], 'PTTL', keys.lock, Number);
  }

  forceUnlock(keys: LockKeys): Promise<boolean> {
    const rw = keys as RwLockKeys;
    return this.transport.run(
      SCRIPTS.rwLockForceUnlock,
      { hash: rw.lock, readers: rw.readers, sharded: this.sharded, channel: rw.channel, notices: rw.notices },
      'forceUnlock',
      rw.lock,
      isOne,
    );
  }
}
