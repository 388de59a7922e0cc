import { checkFunction } from './argument-checks.js';
import { InvalidArgumentError, LockAcquireTimeoutError } from './errors.js';
import { ReentrantLockHandle, type HandleHold } from './lock-handle.js';
import { ownerId, parseLockOptions, requireTask, type LockRequest } from './lock-request.js';
import type { LockHandle, LockOptions, LockScope, RLock } from './lock-types.js';
import { currentTask, newTaskContext, runInTaskOrNew, type TaskContext } from './task-context.js';

/** What the shared lock calls need of a hold (a core hold, a Redlock hold). */
export interface LockHoldView extends HandleHold {
  readonly state: 'held' | 'released' | 'lost';
}

/** A waiting call's request as an implementation receives it. */
export interface AcquireRequest extends LockRequest {
  /** tryLock: give up at once when the lock cannot be decided (Redlock: no quorum possible). */
  readonly failFast?: boolean;
}

/** What the shared calls need of the client behind a lock. */
export interface LockOwnerContext {
  readonly clientId: string;
  /** False for a client without a renewer: it takes fixed leases only. */
  readonly canRenew: boolean;
  /** @throws ClientClosedError once the client is closed. */
  assertOpen(): void;
  /** A failure in the background: reported as an `error` event, never thrown. */
  backgroundError(error: unknown): void;
}

/**
 * The Java-style surface every reentrant lock shares, on one Redis or across
 * Redlock masters: option checks, the task rules, withLock's error precedence
 * and handles. Implementations supply how one owner acquires (waiting included)
 * and releases, and the reads.
 */
export abstract class ReentrantLockBase<H extends LockHoldView> implements RLock {
  constructor(
    readonly name: string,
    private readonly context: LockOwnerContext,
  ) {}

  async lock(options?: LockOptions): Promise<void> {
    const request = parseLockOptions(options, 'lock');
    await this.acquireOrThrow(requireTask(this.name, 'lock'), request);
  }

  async tryLock(options?: LockOptions): Promise<boolean> {
    const request = parseLockOptions(options, 'tryLock');
    const task = requireTask(this.name, 'tryLock');
    return (await this.acquireChecked(task, { ...request, waitMs: request.waitMs ?? 0, failFast: true })) !== undefined;
  }

  async unlock(): Promise<void> {
    await this.releaseFor(this.ownerOf(requireTask(this.name, 'unlock')));
  }

  async withLock<T>(fn: (scope: LockScope) => T | Promise<T>, options?: LockOptions): Promise<T> {
    checkFunction(fn, 'withLock(fn)');
    const request = parseLockOptions(options, 'withLock');
    return runInTaskOrNew(async () => {
      const task = currentTask() as TaskContext;
      const hold = await this.acquireOrThrow(task, request);
      let result: T;
      try {
        result = await fn({ signal: hold.signal, token: hold.token });
      } catch (error) {
        // The caller sees fn's error; a failed release is only reported.
        await this.releaseFor(this.ownerOf(task), hold).catch((releaseError: unknown) => {
          if (hold.state !== 'lost') this.context.backgroundError(releaseError);
        });
        throw error;
      }
      await this.releaseFor(this.ownerOf(task), hold);
      return result;
    });
  }

  async acquire(options?: LockOptions): Promise<LockHandle> {
    const request = parseLockOptions(options, 'acquire');
    const task = currentTask() ?? newTaskContext();
    const hold = await this.acquireOrThrow(task, request);
    return new ReentrantLockHandle(this.name, hold, task, () => this.releaseFor(this.ownerOf(task), hold));
  }

  abstract isLocked(): Promise<boolean>;
  abstract isHeldByCurrentTask(): Promise<boolean>;
  abstract getHoldCount(): Promise<number>;
  abstract remainTimeToLive(): Promise<number>;
  abstract forceUnlock(): Promise<boolean>;

  /**
   * Acquires for `task`, waiting as `request` says: the hold, or undefined when
   * `waitMs` ran out; rejects with the signal's reason when it aborts. Called
   * after the client was found open, the signal not aborted, and a watchdog
   * lease renewable.
   */
  protected abstract acquireFor(task: TaskContext, request: AcquireRequest): Promise<H | undefined>;

  /**
   * Releases one acquisition of `owner`: of `own` when the caller knows which
   * hold it took (a handle, withLock), else of the owner's newest hold.
   */
  protected abstract releaseFor(owner: string, own?: H): Promise<void>;

  protected async acquireOrThrow(task: TaskContext, request: AcquireRequest): Promise<H> {
    const hold = await this.acquireChecked(task, request);
    if (!hold) throw new LockAcquireTimeoutError(this.name, request.waitMs ?? 0);
    return hold;
  }

  /** The checks every acquisition makes before anything is sent, then acquireFor. */
  private acquireChecked(task: TaskContext, request: AcquireRequest): Promise<H | undefined> {
    this.context.assertOpen();
    request.signal?.throwIfAborted();
    if (request.leaseMs === undefined && !this.context.canRenew) {
      throw new InvalidArgumentError(`lock "${this.name}": leaseMs is required, this client has no watchdog to renew leases`);
    }
    return this.acquireFor(task, request);
  }

  protected ownerOf(task: TaskContext): string {
    return ownerId(this.context.clientId, task);
  }

  protected requireTask(call: string): TaskContext {
    return requireTask(this.name, call);
  }
}
