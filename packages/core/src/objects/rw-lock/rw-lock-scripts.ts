import type { Deployment } from '../../connection/deployment.js';
import type { AcquireReply } from '../../engine/attempt.js';
import type { EngineContext } from '../../engine/engine-context.js';
import type { ReleaseReply } from '../../engine/release.js';
import type { WaitQueue } from '../../engine/wait-queue.js';
import { IllegalMonitorStateError } from '../../errors.js';
import type { AcquireTerms } from '../lock/lock-store.js';
import { parseAcquire as parseHoldAcquire, parseRelease, type LockScripts } from '../lock/server-lock-store.js';
import { ContextStore, isOne } from '../object-store.js';
import { SCRIPTS } from '../scripts.generated.js';
import { rwLockKeys, type RwLockKeys } from './keys.js';

export type RwMode = 'read' | 'write';

/** The lock's replies, and −3: the write lock asked by a task that holds only the read lock. */
function parseAcquire(reply: unknown): AcquireReply {
  if ((reply as number[])[0] === -3)
    throw new IllegalMonitorStateError('the write lock was asked by a task that holds only the read lock (it would wait for itself)');
  return parseHoldAcquire(reply);
}

/** The scripts of one mode of the read-write lock (rw-lock/*.lua): readers share, and a refused writer's tries renew its waiter lease. */
export class RwLockScripts extends ContextStore implements LockScripts<RwLockKeys> {
  constructor(
    deployment: Deployment,
    ctx: EngineContext,
    readonly mode: RwMode,
  ) {
    super(deployment, ctx);
  }

  keysOf(prefix: string, name: string): RwLockKeys {
    return rwLockKeys(prefix, name);
  }

  acquire(keys: RwLockKeys, owner: string, leaseMs: number, op: string, terms: Pick<AcquireTerms, 'waits'>): Promise<AcquireReply> {
    const { lock: hash, readers, writers, fence, cancelled } = keys;
    const join = terms.waits ? '1' : '0';
    // A refused writer holds new readers back a watchdog lease without trying again (its tries renew it).
    const waiterLeaseMs = this.ctx.watchdogTimeoutMs;
    // One literal, no spread: on this hot path a spread costs more client CPU than the rest of the call.
    const args = { hash, readers, writers, fence, cancelled, owner, leaseMs, op, mode: this.mode, waiterLeaseMs, join };
    return this.transport.run(SCRIPTS.rwLockAcquire, args, 'acquire', hash, parseAcquire);
  }

  cancel(keys: RwLockKeys, owner: string, op: string): Promise<boolean> {
    const { lock: hash, readers, writers, released, cancelled, channel } = keys;
    const { mode, replayWindowMs, sharded } = this;
    const args = { hash, readers, writers, released, cancelled, owner, op: `${op}/cancel`, acquireOp: op, mode, replayWindowMs, sharded, channel };
    return this.transport.run(SCRIPTS.rwLockCancel, args, 'cancel', hash, isOne);
  }

  /** One release in `mode`: this store's, or a hold's of either mode (clear). */
  release(keys: RwLockKeys, owner: string, token: string | undefined, op: string, all: boolean, mode: string): Promise<ReleaseReply> {
    const { lock: hash, readers, writers, released, channel } = keys;
    const { replayWindowMs, sharded } = this;
    const args = { hash, readers, writers, released, owner, op, mode, all: all ? '1' : '0', token: token ?? '', replayWindowMs, sharded, channel };
    return this.transport.run(SCRIPTS.rwLockRelease, args, 'release', hash, parseRelease);
  }

  /** 'unlock' (a writer leaving, or the last reader) or 'force': every local waiter tries (readers may all enter); anything else is dropped. */
  onMessage(payload: string, queue: WaitQueue): boolean {
    if (payload !== 'unlock' && payload !== 'force') return false;
    queue.wakeAll('released');
    return true;
  }

  leaveQueue(keys: RwLockKeys, owner: string): Promise<boolean> {
    if (this.mode !== 'write') return Promise.resolve(false);
    const args = { writers: keys.writers, owner, sharded: this.sharded, channel: keys.channel };
    return this.transport.run(SCRIPTS.rwLockLeaveQueue, args, 'leaveQueue', keys.lock, isOne);
  }

  forceUnlock({ lock: hash, readers, channel, notices }: RwLockKeys): Promise<boolean> {
    return this.transport.run(SCRIPTS.rwLockForceUnlock, { hash, readers, sharded: this.sharded, channel, notices }, 'forceUnlock', hash, isOne);
  }
}
