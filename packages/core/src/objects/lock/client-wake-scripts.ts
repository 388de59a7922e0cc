import type { Deployment } from '../../connection/deployment.js';
import type { AcquireReply } from '../../engine/acquire.js';
import type { EngineContext } from '../../engine/engine-context.js';
import type { ReleaseReply } from '../../engine/release.js';
import type { WaitQueue, WaitQueues } from '../../engine/wait-queue.js';
import type { LockRequest } from '../lock-options.js';
import { isOne, ObjectStore } from '../object-store.js';
import { SCRIPTS } from '../scripts.generated.js';
import { plainKeysOfLock, plainLockKeys, type PlainLockKeys } from './keys.js';
import { parseAcquire, parseRelease, type LockScripts } from './server-lock-store.js';

/** What the scripts need to wake one waiting client per release (wake-client.lua). */
export interface ClientWaits {
  readonly clientId: string;
  /** A release registers the client when other tasks of it still wait. */
  readonly queues: WaitQueues;
  /** How long the waiting-clients zset lives after a registration, ms. */
  readonly ttlMs: number;
}

/** The zset lives a watchdog lease: waiters try again at least every third of it. */
export function lockWaits(ctx: EngineContext): ClientWaits {
  return { clientId: ctx.clientId, queues: ctx.queues, ttlMs: ctx.watchdogTimeoutMs };
}

/** Between a lock key and a client id in a wake channel (keys.ts). */
const WAKE_INFIX = ':release:';

/**
 * The lock's scripts (lock/*.lua): whoever tries first when it is free gets it, and each release wakes one
 * waiting client, which hands the wake to its longest local waiter (or on to the next client).
 */
export class ClientWakeScripts extends ObjectStore implements LockScripts<PlainLockKeys> {
  constructor(
    deployment: Deployment,
    replayWindowMs: number,
    private readonly waits: ClientWaits,
  ) {
    super(deployment, replayWindowMs);
  }

  keysOf(prefix: string, name: string): PlainLockKeys {
    return plainLockKeys(prefix, name, this.waits.clientId);
  }

  acquire(keys: PlainLockKeys, owner: string, leaseMs: number, op: string, request: LockRequest | undefined, once: boolean): Promise<AcquireReply> {
    return this.transport.run(
      SCRIPTS.lockAcquire,
      {
        lock: keys.lock,
        fence: keys.fence,
        cancelled: keys.cancelled,
        clients: keys.clients,
        owner,
        leaseMs,
        op,
        once: once ? '1' : '0',
        clientsTtlMs: this.waits.ttlMs,
        // tryLock({ waitMs: 0 }) does not wait: a release need not wake its client.
        waits: request?.waitMs === 0 ? '0' : '1',
      },
      'acquire',
      keys.lock,
      parseAcquire,
    );
  }

  cancel(keys: PlainLockKeys, owner: string, op: string): Promise<boolean> {
    return this.transport.run(
      SCRIPTS.lockCancel,
      {
        lock: keys.lock,
        released: keys.released,
        cancelled: keys.cancelled,
        clients: keys.clients,
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

  release(keys: PlainLockKeys, owner: string, token: string | undefined, op: string, all: boolean): Promise<ReleaseReply> {
    // The releasing task has left the queue: whoever is in it waits still.
    const waiting = this.waits.queues.hasWaiters(keys.channel) ? '1' : '0';
    return this.transport.run(
      SCRIPTS.lockRelease,
      {
        lock: keys.lock,
        released: keys.released,
        clients: keys.clients,
        owner,
        op,
        all: all ? '1' : '0',
        token: token ?? '',
        replayWindowMs: this.replayWindowMs,
        sharded: this.sharded,
        wakePrefix: keys.wakePrefix,
        waiting,
        clientsTtlMs: this.waits.ttlMs,
      },
      'release',
      keys.lock,
      parseRelease,
    );
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
    const { clientId } = this.waits;
    const lock = channel.slice(0, channel.length - WAKE_INFIX.length - clientId.length);
    const keys = plainKeysOfLock(lock, clientId);
    // Unanswered, the others' timed tries still come (at most a third of the watchdog lease).
    return this.transport
      .run(SCRIPTS.lockWake, { lock, clients: keys.clients, clientId, sharded: this.sharded, wakePrefix: keys.wakePrefix }, 'wake', lock, Number)
      .catch(() => undefined);
  }

  async forceUnlock(keys: PlainLockKeys): Promise<boolean> {
    // 'force' on the lock's shared channel, where no waiter of this layout listens; the wake follows.
    const released = await this.transport.run(
      SCRIPTS.lockForceUnlock,
      { lock: keys.lock, sharded: this.sharded, channel: `${keys.lock}:release`, notices: keys.notices },
      'forceUnlock',
      keys.lock,
      isOne,
    );
    if (released) {
      await this.transport.run(
        SCRIPTS.lockWake,
        { lock: keys.lock, clients: keys.clients, clientId: '', sharded: this.sharded, wakePrefix: keys.wakePrefix },
        'wake',
        keys.lock,
        Number,
      );
    }
    return released;
  }
}
