import { nanoid } from 'nanoid';
import {
  ClientClosedError,
  IllegalMonitorStateError,
  InvalidArgumentError,
  LockAcquireTimeoutError,
  RedisUnavailableError,
} from './errors.js';
import {
  checkDurationMs,
  checkFunction,
  checkKnownKeys,
  checkOptionsObject,
  checkSignal,
} from './argument-checks.js';
import { Hold } from './hold.js';
import { leaseDeadline, monotonicNow } from './lease-deadline.js';
import type { LockHandle, LockOptions, LockScope, RLock } from './lock-types.js';
import { lockKeys, type LockKeys } from './lock-keys.js';
import type { LockRuntime } from './lock-runtime.js';
import { ReentrantLockHandle } from './lock-handle.js';
import { currentTask, newTaskContext, runInTaskOrNew, type TaskContext } from './task-context.js';
import type { Waiter } from './release-subscriber.js';

interface AcquireRequest {
  readonly leaseMs: number | undefined;
  readonly waitMs: number | undefined;
  readonly signal: AbortSignal | undefined;
}

type TryResult = { readonly hold: Hold } | { readonly ttlMs: number };

const OPTION_NAMES = ['leaseMs', 'waitMs', 'signal'] as const;

/** The reentrant lock on one Redis: see {@link RLock}. */
export class ReentrantLock implements RLock {
  readonly keys: LockKeys;

  constructor(
    readonly name: string,
    private readonly runtime: LockRuntime,
  ) {
    this.keys = lockKeys(runtime.keyPrefix, name);
  }

  async lock(options?: LockOptions): Promise<void> {
    const request = this.parse(options, 'lock');
    const task = this.requireTask('lock');
    await this.acquireOrThrow(task, request);
  }

  async tryLock(options?: LockOptions): Promise<boolean> {
    const request = this.parse(options, 'tryLock');
    const task = this.requireTask('tryLock');
    return (await this.acquireFor(task, { ...request, waitMs: request.waitMs ?? 0 })) !== undefined;
  }

  async unlock(): Promise<void> {
    const task = this.requireTask('unlock');
    await this.releaseFor(this.ownerOf(task));
  }

  async withLock<T>(fn: (scope: LockScope) => T | Promise<T>, options?: LockOptions): Promise<T> {
    checkFunction(fn, 'withLock(fn)');
    const request = this.parse(options, 'withLock');
    return runInTaskOrNew(async () => {
      const task = currentTask() as TaskContext;
      const hold = await this.acquireOrThrow(task, request);
      let result: T;
      try {
        result = await fn({ signal: hold.signal, token: hold.token });
      } catch (error) {
        // The caller sees fn's error; a failed release is only reported.
        await this.releaseFor(this.ownerOf(task)).catch((releaseError: unknown) => {
          if (hold.state !== 'lost') this.runtime.backgroundError(releaseError);
        });
        throw error;
      }
      await this.releaseFor(this.ownerOf(task));
      return result;
    });
  }

  async acquire(options?: LockOptions): Promise<LockHandle> {
    const request = this.parse(options, 'acquire');
    const task = currentTask() ?? newTaskContext();
    const hold = await this.acquireOrThrow(task, request);
    return new ReentrantLockHandle(this.name, hold, task, () => this.releaseFor(this.ownerOf(task)));
  }

  async isLocked(): Promise<boolean> {
    this.runtime.assertOpen();
    return this.runtime.backend.exists(this.keys);
  }

  async isHeldByCurrentTask(): Promise<boolean> {
    const owner = this.ownerOf(this.requireTask('isHeldByCurrentTask'));
    this.runtime.assertOpen();
    return (await this.runtime.backend.readHolder(this.keys))?.owner === owner;
  }

  async getHoldCount(): Promise<number> {
    const owner = this.ownerOf(this.requireTask('getHoldCount'));
    this.runtime.assertOpen();
    const holder = await this.runtime.backend.readHolder(this.keys);
    return holder?.owner === owner ? holder.count : 0;
  }

  async remainTimeToLive(): Promise<number> {
    this.runtime.assertOpen();
    return this.runtime.backend.pttl(this.keys);
  }

  async forceUnlock(): Promise<boolean> {
    this.runtime.assertOpen();
    const released = await this.runtime.backend.forceUnlock(this.keys);
    for (const hold of this.runtime.registry.holdsOf(this.keys.lock)) hold.lose('forced');
    return released;
  }

  // ---- acquisition -------------------------------------------------------

  private async acquireOrThrow(task: TaskContext, request: AcquireRequest): Promise<Hold> {
    const hold = await this.acquireFor(task, request);
    if (!hold) throw new LockAcquireTimeoutError(this.name, request.waitMs ?? 0);
    return hold;
  }

  /**
   * Tries, then waits on the lock's channel and tries again on each release
   * message or when the holder's TTL (capped) runs out, until acquired, `waitMs`
   * runs out (undefined), or the signal aborts (rejects with its reason).
   */
  private async acquireFor(task: TaskContext, request: AcquireRequest): Promise<Hold | undefined> {
    const { runtime } = this;
    runtime.assertOpen();
    request.signal?.throwIfAborted();
    if (request.leaseMs === undefined && !runtime.canRenew) {
      throw new InvalidArgumentError(`lock "${this.name}": leaseMs is required, this client has no watchdog to renew leases`);
    }
    const owner = this.ownerOf(task);
    const reentry = runtime.registry.current(this.keys.lock, owner)?.active === true;
    const waitUntil = request.waitMs === undefined ? Infinity : monotonicNow() + request.waitMs;

    // Tasks of this process queue behind the ones already waiting (no barging):
    // a releasing task that locks again at once must not starve them. Reentry
    // never queues, or a task would wait for itself.
    let tryNow = reentry || request.waitMs === 0 || !runtime.subscriber.hasWaiters(this.keys.channel);
    let ttlMs = runtime.maxSleepMs;
    if (tryNow) {
      const first = await this.tryOnce(owner, request);
      if ('hold' in first) return first.hold;
      if (request.waitMs === 0) return undefined;
      ttlMs = first.ttlMs;
    }

    let waiter: Waiter | undefined;
    let acquired = false;
    try {
      waiter = await runtime.subscriber.join(this.keys.channel);
      // The subscription is acknowledged: a release from now on cannot be missed.
      tryNow = true;
      for (;;) {
        if (tryNow) {
          const result = await this.tryOnce(owner, request);
          if ('hold' in result) {
            acquired = true;
            return result.hold;
          }
          ttlMs = result.ttlMs;
        }
        const remaining = waitUntil - monotonicNow();
        if (remaining <= 0) return undefined;
        // PTTL -1 (a key without TTL) must not park a waiter forever.
        const sleepMs = Math.min(ttlMs >= 0 ? Math.max(1, ttlMs) : runtime.maxSleepMs, runtime.maxSleepMs, remaining);
        await waiter.sleep(Math.ceil(sleepMs), request.signal);
        if (waiter.channel.closedError) throw waiter.channel.closedError;
        tryNow = true;
      }
    } finally {
      if (waiter) runtime.subscriber.leave(waiter, acquired);
    }
  }

  /** One acquire script call. A late or aborted grant counts as not acquired and is undone. */
  private async tryOnce(owner: string, request: AcquireRequest): Promise<TryResult> {
    const { runtime } = this;
    runtime.assertOpen();
    request.signal?.throwIfAborted();
    const leaseMs = request.leaseMs ?? runtime.watchdogTimeoutMs;
    const op = nanoid();
    let sentAt = 0;
    let reply;
    try {
      reply = await runtime.registry.serialize(this.keys.lock, owner, () => {
        sentAt = monotonicNow();
        return runtime.backend.acquire(this.keys, owner, leaseMs, op);
      });
    } catch (error) {
      // No answer in time: the call may still run later. Cancel it by op id (the
      // cancel runs after it on the same connection) so it cannot leave a hold
      // nobody knows about.
      if (error instanceof RedisUnavailableError) this.undoGrant(owner, op);
      throw error;
    }
    if (!reply.granted) return { ttlMs: reply.ttlMs };

    const late = monotonicNow() >= leaseDeadline(sentAt, leaseMs);
    if (late || request.signal?.aborted || runtime.closed) {
      this.undoGrant(owner, op);
      request.signal?.throwIfAborted();
      if (runtime.closed) throw new ClientClosedError();
      return { ttlMs: 1 };
    }
    return { hold: this.recordGrant(owner, reply.token, reply.count, sentAt, request.leaseMs) };
  }

  private recordGrant(owner: string, token: string, count: number, sentAt: number, leaseMs: number | undefined): Hold {
    const { registry } = this.runtime;
    let hold = registry.current(this.keys.lock, owner);
    if (hold?.active && hold.token !== token) {
      // A fresh token for a hold we believed active: it expired unseen.
      hold.lose('expired');
    }
    if (!hold || !hold.active) {
      const fresh = new Hold(this.name, this.keys, owner, token, this.runtime.watchdogTimeoutMs, this.runtime.holdObserver);
      if (hold && hold.count > 0) fresh.previous = hold;
      registry.set(fresh);
      hold = fresh;
    }
    hold.acquired(count, sentAt, leaseMs);
    this.runtime.acquired(hold);
    return hold;
  }

  /** Releases the grant of acquire `op` if it is the hold's last op; best effort, in the background. */
  private undoGrant(owner: string, op: string): void {
    const { runtime } = this;
    runtime.registry
      .serialize(this.keys.lock, owner, () => runtime.backend.release(this.keys, { owner, op: nanoid(), ifOp: op }))
      .catch((error: unknown) => runtime.backgroundError(error));
  }

  // ---- release -----------------------------------------------------------

  private async releaseFor(owner: string): Promise<void> {
    const { runtime } = this;
    const hold = runtime.registry.current(this.keys.lock, owner);
    if (!hold) {
      throw new IllegalMonitorStateError(`lock "${this.name}" is not held by the current task (nothing was released)`);
    }
    if (!hold.active) {
      runtime.registry.dropOne(hold);
      throw hold.lostError ?? new IllegalMonitorStateError(`lock "${this.name}" is not held by the current task`);
    }
    runtime.assertOpen();
    const op = nanoid();
    const final = hold.count <= 1;
    if (final) hold.beginFinalRelease();
    let reply;
    try {
      reply = await runtime.registry.serialize(this.keys.lock, owner, () => runtime.backend.release(this.keys, { owner, op }));
    } catch (error) {
      if (final) hold.resumeAfterFailedRelease();
      throw error;
    }
    if (!hold.active) {
      // Lost while the release was in flight (its fixed deadline passed, or a
      // forceUnlock): the holder must hear of it, whatever the reply.
      runtime.registry.dropOne(hold);
      throw hold.lostError;
    }
    if (reply.released) {
      hold.releasedOne(reply.remaining);
      if (reply.remaining === 0) {
        runtime.registry.remove(hold);
        runtime.released(hold);
      }
      return;
    }
    hold.lose(reply.why === 'not-held' && reply.keyExists ? 'taken' : 'expired');
    runtime.registry.dropOne(hold);
    throw hold.lostError;
  }

  // ---- helpers -----------------------------------------------------------

  private ownerOf(task: TaskContext): string {
    return `${this.runtime.clientId}:${task.taskId}`;
  }

  private requireTask(call: string): TaskContext {
    const task = currentTask();
    if (!task) {
      throw new IllegalMonitorStateError(
        `${call}() on lock "${this.name}" needs a task: run it inside client.task(fn) or lock.withLock(fn), ` +
          'or use lock.acquire() for a handle that works anywhere',
      );
    }
    return task;
  }

  private parse(options: LockOptions | undefined, call: string): AcquireRequest {
    const raw = checkOptionsObject(options, `${call}() options`);
    checkKnownKeys(raw, OPTION_NAMES, `${call}() options`);
    return {
      leaseMs: raw.leaseMs === undefined ? undefined : checkDurationMs(raw.leaseMs, `${call}(): leaseMs`),
      waitMs: raw.waitMs === undefined ? undefined : checkDurationMs(raw.waitMs, `${call}(): waitMs`, 0),
      signal: checkSignal(raw.signal, `${call}(): signal`),
    };
  }
}
