import type { BatchedScript } from '../../connection/call-batch.js';
import type { ScriptArgsOf } from '../../connection/scripts.js';
import type { AcquireReply } from '../../engine/attempt.js';
import type { ReleaseReply } from '../../engine/release.js';
import type { WaitQueue } from '../../engine/wait-queue.js';
import { ContextStore, isOne } from '../object-store.js';
import { SCRIPTS } from '../scripts.generated.js';
import { clientsKey, plainLockKeys, type PlainLockKeys } from './keys.js';
import type { AcquireTerms } from './lock-store.js';
import { parseAcquire, parseRelease, type LockScripts } from './server-lock-store.js';

/** Acquisitions and releases that queue behind the calls in flight go out in one batch call each (connection/transport.ts). */
const ACQUIRE: BatchedScript<ScriptArgsOf<typeof SCRIPTS.lockAcquire>> = { single: SCRIPTS.lockAcquire, batch: SCRIPTS.lockAcquireBatch };
const RELEASE: BatchedScript<ScriptArgsOf<typeof SCRIPTS.lockRelease>> = { single: SCRIPTS.lockRelease, batch: SCRIPTS.lockReleaseBatch };

/** Between a lock key and a client id in a wake channel (keys.ts). */
const WAKE_INFIX = ':release:';

/**
 * The lock's scripts (lock/*.lua): whoever tries first when it is free gets it, and each release wakes one
 * waiting client, which hands the wake to its longest local waiter (or on to the next client).
 */
export class ClientWakeScripts extends ContextStore implements LockScripts<PlainLockKeys> {
  keysOf(prefix: string, name: string): PlainLockKeys {
    return plainLockKeys(prefix, name, this.ctx.clientId);
  }

  acquire(keys: PlainLockKeys, owner: string, leaseMs: number, op: string, terms: Pick<AcquireTerms, 'waits'>, once: boolean): Promise<AcquireReply> {
    const { lock, fence, cancelled, clients } = keys;
    // The waiting-clients zset lives a watchdog lease after a registration (waiters try again at least every third of it).
    // tryLock({ waitMs: 0 }) does not wait: a release need not wake its client.
    const waitTtlMs = terms.waits ? this.ctx.watchdogTimeoutMs : '0';
    const args = { lock, fence, cancelled, clients, owner, leaseMs, op, once: once ? '1' : '0', waitTtlMs };
    return this.transport.coalesced(ACQUIRE, args, 'acquire', lock, parseAcquire);
  }

  cancel(keys: PlainLockKeys, owner: string, op: string): Promise<boolean> {
    const { lock, released, cancelled, clients } = keys;
    const { replayWindowMs, sharded } = this;
    const args = { lock, released, cancelled, clients, owner, op: `${op}/cancel`, acquireOp: op, all: '0', replayWindowMs, sharded };
    return this.transport.run(SCRIPTS.lockCancel, args, 'cancel', lock, isOne);
  }

  release(keys: PlainLockKeys, owner: string, token: string | undefined, op: string, all: boolean): Promise<ReleaseReply> {
    const { lock, released, clients } = keys;
    const { replayWindowMs, sharded } = this;
    // The client registers again when other tasks of it still wait (the releasing task has left the queue).
    const requeueTtlMs = this.ctx.queues.hasWaiters(keys.channel) ? this.ctx.watchdogTimeoutMs : '0';
    const args = { lock, released, clients, owner, op, all: all ? '1' : '0', token: token ?? '', replayWindowMs, sharded, requeueTtlMs };
    return this.transport.coalesced(RELEASE, args, 'release', lock, parseRelease);
  }

  /** 'unlock' (wake-client.lua): a release woke this client alone; anything else is dropped. */
  onMessage(payload: string, queue: WaitQueue): boolean {
    if (payload !== 'unlock') return false;
    // One local waiter tries; a wake none here can use is passed on.
    queue.unheard ??= () => void this.passOn(queue.channel);
    queue.released();
    return true;
  }

  /** Hands an unusable wake to the next waiting client, if the lock is still free. */
  private passOn(channel: string): Promise<unknown> {
    const { clientId } = this.ctx;
    const lock = channel.slice(0, channel.length - WAKE_INFIX.length - clientId.length);
    const args = { lock, clients: clientsKey(lock), clientId, sharded: this.sharded };
    // Unanswered, the others' timed tries still come (at most a third of the watchdog lease).
    return this.transport.run(SCRIPTS.lockWake, args, 'wake', lock, Number).catch(() => undefined);
  }

  async forceUnlock({ lock, clients, notices }: PlainLockKeys): Promise<boolean> {
    const { sharded } = this;
    // 'force' on the lock's shared channel, where no waiter of this layout listens; the wake follows.
    const released = await this.transport.run(SCRIPTS.lockForceUnlock, { lock, sharded, channel: `${lock}:release`, notices }, 'forceUnlock', lock, isOne);
    if (released) await this.transport.run(SCRIPTS.lockWake, { lock, clients, clientId: '', sharded }, 'wake', lock, Number);
    return released;
  }
}
