import { replicated, type Deployment } from '../../connection/deployment.js';
import type { AcquireReply } from '../../engine/attempt.js';
import type { EngineContext } from '../../engine/engine-context.js';
import type { Hold } from '../../engine/hold.js';
import type { ReleaseReply } from '../../engine/release.js';
import type { RenewableHold, RenewOutcome } from '../../engine/renewal.js';
import { DEFAULT_DRIFT_FACTOR } from '../../connection/time.js';
import type { WaitQueue, WaitQueues } from '../../engine/wait-queue.js';
import type { LockRequest } from '../lock-options.js';
import { isOne, ObjectStore, renewOutcome } from '../object-store.js';
import { SCRIPTS } from '../scripts.generated.js';
import { plainKeysOfLock, plainLockKeys, type LockKeys, type PlainLockKeys } from './keys.js';
import type { LockStore, OwnerHoldRead } from './lock-store.js';

/** The zset lives a watchdog lease: waiters try again at least every third of it. */
export function lockWaits(ctx: EngineContext): ClientWaits {
  return { clientId: ctx.clientId, queues: ctx.queues, ttlMs: ctx.watchdogTimeoutMs };
}

/** Between a lock key and a client id in a wake channel (keys.ts). */
const WAKE_INFIX = ':release:';

const isGranted = (reply: { readonly granted: boolean }): boolean => reply.granted;

export const LOCK_KIND = 'lock';

// Made once, not a closure per call. The fair lock's scripts answer alike (a queued refusal names no holder: '').
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

const asCodes = (reply: unknown): number[] => reply as number[];

/** What a store needs to wake one waiting client per release (wake-client.lua). */
export interface ClientWaits {
  readonly clientId: string;
  /** A release registers the client when other tasks of it still wait. */
  readonly queues: WaitQueues;
  /** How long the waiting-clients zset lives after a registration, ms. */
  readonly ttlMs: number;
}

/** The reentrant lock's protocol on one deployment: one script per state change, and its reads. */
export class ServerLockStore extends ObjectStore implements LockStore {
  readonly counting = 'server';
  readonly driftFactor = DEFAULT_DRIFT_FACTOR;
  readonly headOnly = false;
  readonly kind = LOCK_KIND;
  readonly object: string;
  readonly reentrant: boolean;
  private opCounter = 0;

  constructor(
    deployment: Deployment,
    replayWindowMs: number,
    /** lock/acquire.lua's kind: '' counts an owner's acquisitions; 'nonReentrantLock' refuses its second. */
    private readonly lockKind: '' | 'nonReentrantLock' = '',
    /** The client whose locks these are (absent where a subclass wakes its own way: the fair lock). */
    private readonly waits?: ClientWaits,
  ) {
    super(deployment, replayWindowMs);
    this.object = lockKind === 'nonReentrantLock' ? 'non_reentrant_lock' : 'lock';
    this.reentrant = lockKind === '';
  }

  keysOf(prefix: string, name: string): LockKeys {
    return plainLockKeys(prefix, name, this.waitingClientId);
  }

  private get waitingClientId(): string {
    return this.waits?.clientId ?? '';
  }

  acquire(keys: LockKeys, owner: string, leaseMs: number, op: string, request?: LockRequest): Promise<AcquireReply> {
    const plain = keys as PlainLockKeys;
    const reply = this.transport.run(
      SCRIPTS.lockAcquire,
      {
        lock: plain.lock,
        fence: plain.fence,
        cancelled: plain.cancelled,
        clients: plain.clients,
        owner,
        leaseMs,
        op,
        once: this.reentrant ? '0' : '1',
        // tryLock({ waitMs: 0 }) does not wait: a release need not wake its client.
        waitTtlMs: request?.waitMs === 0 ? '0' : (this.waits?.ttlMs ?? 0),
      },
      'acquire',
      keys.lock,
      parseAcquire,
    );
    return this.replicated(reply, keys.lock);
  }

  /** The arguments the lock's and the fair lock's cancel scripts share. */
  protected cancelArgs(owner: string, op: string, all: boolean) {
    return { owner, op: `${op}/cancel`, acquireOp: op, all: all ? '1' : '0', replayWindowMs: this.replayWindowMs, sharded: this.sharded };
  }

  /** With `syncReplicas` a grant counts once enough replicas have it; a rejection makes the engine undo it. */
  protected replicated<T extends { readonly granted: boolean }>(reply: Promise<T>, key: string): Promise<T> {
    return replicated(this.deployment, key, reply, isGranted);
  }

  cancel(keys: LockKeys, owner: string, op: string, all = false): Promise<boolean> {
    const plain = keys as PlainLockKeys;
    return this.transport.run(
      SCRIPTS.lockCancel,
      {
        lock: plain.lock,
        released: plain.released,
        cancelled: plain.cancelled,
        clients: plain.clients,
        ...this.cancelArgs(owner, op, all),
      },
      'cancel',
      keys.lock,
      isOne,
    );
  }

  release(keys: LockKeys, hold: Hold, op: string, all = false): Promise<ReleaseReply> {
    return this.releaseAs(keys, hold.owner, hold.token, op, all);
  }

  /** With `token`, never releases a newer hold. */
  releaseAs(keys: LockKeys, owner: string, token: string | undefined, op: string, all: boolean): Promise<ReleaseReply> {
    const plain = keys as PlainLockKeys;
    // The releasing task has left the queue: whoever is in it waits still.
    const requeueTtlMs = this.waits?.queues.hasWaiters(plain.channel) === true ? this.waits.ttlMs : '0';
    return this.transport.run(
      SCRIPTS.lockRelease,
      {
        lock: plain.lock,
        released: plain.released,
        clients: plain.clients,
        owner,
        op,
        all: all ? '1' : '0',
        token: token ?? '',
        replayWindowMs: this.replayWindowMs,
        sharded: this.sharded,
        requeueTtlMs,
      },
      'release',
      keys.lock,
      parseRelease,
    );
  }

  async finishRelease(keys: LockKeys, hold: Hold, op: string): Promise<'released' | 'gone'> {
    const reply = await this.release(keys, hold, op, true);
    return reply.released ? 'released' : 'gone';
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
    const lock = channel.slice(0, channel.length - WAKE_INFIX.length - this.waitingClientId.length);
    const keys = plainKeysOfLock(lock, this.waitingClientId);
    // Unanswered, the others' timed tries still come (at most a third of the watchdog lease).
    return this.transport
      .run(SCRIPTS.lockWake, { lock, clients: keys.clients, clientId: this.waitingClientId, sharded: this.sharded }, 'wake', lock, Number)
      .catch(() => undefined);
  }

  batchKey(hold: RenewableHold): string {
    return this.deployment.batchKey(hold.key);
  }

  async renew(holds: readonly RenewableHold[]): Promise<RenewOutcome[]> {
    const codes = await this.renewItems(holds.map((hold) => ({ key: hold.key, owner: hold.owner, token: hold.token ?? '', leaseMs: hold.leaseMs })));
    return this.renewed(codes, holds[0]?.key ?? '');
  }

  async extend(hold: Hold, leaseMs: number): Promise<'renewed' | 'gone' | 'taken'> {
    const [code] = await this.renewItems([{ key: hold.key, owner: hold.owner, token: hold.token ?? '', leaseMs }]);
    return renewOutcome(code);
  }

  /** One renew.lua call; one code per item: 1 renewed, 0 gone, −1 taken. */
  renewItems(items: readonly { key: string; owner: string; token: string; leaseMs: number }[]): Promise<number[]> {
    return this.transport.run(SCRIPTS.lockRenew, { items }, `renew of ${items.length} holds`, items[0]?.key ?? '', asCodes);
  }

  async clear(hold: Hold): Promise<boolean> {
    const reply = await this.release(plainKeysOfLock(hold.key, this.waitingClientId), hold, `clear/${++this.opCounter}`, true);
    return reply.released;
  }

  isLocked(keys: LockKeys): Promise<boolean> {
    return this.transport.call('exists', [keys.lock], 'EXISTS', keys.lock, isOne);
  }

  async ownerHold(keys: LockKeys, _name: string, owner: string): Promise<OwnerHoldRead> {
    // The owner's field of the hash (hold-record.lua); a key of another type answers WRONGTYPE.
    const count = await this.transport.call('hget', [keys.lock, owner], 'a read', keys.lock, (reply) => (reply === null ? undefined : Number(reply)));
    // A fair lock's hold handed over and not yet counted (count 0) is one.
    return count === undefined ? { held: false, count: 0 } : { held: true, count: Math.max(1, count) };
  }

  pttl(keys: LockKeys): Promise<number> {
    return this.transport.call('pttl', [keys.lock], 'PTTL', keys.lock, Number);
  }

  async forceUnlock(keys: LockKeys): Promise<boolean> {
    const plain = keys as PlainLockKeys;
    // 'force' on the lock's shared channel, where no waiter of this layout listens; the wake follows.
    const released = await this.transport.run(
      SCRIPTS.lockForceUnlock,
      { lock: plain.lock, sharded: this.sharded, channel: `${plain.lock}:release`, notices: plain.notices },
      'forceUnlock',
      plain.lock,
      isOne,
    );
    if (released) {
      await this.transport.run(SCRIPTS.lockWake, { lock: plain.lock, clients: plain.clients, clientId: '', sharded: this.sharded }, 'wake', plain.lock, Number);
    }
    return released;
  }
}
