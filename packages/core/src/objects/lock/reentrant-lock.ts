import { acquireObserved, unansweredFailure, type AcquireLabel } from '../../engine/acquire.js';
import { attempt, type AcquireReply, type TryOutcome } from '../../engine/attempt.js';
import { HoldAttempt } from '../../engine/hold-attempt.js';
import type { WaitQueue } from '../../engine/wait-queue.js';
import type { Hold, HoldTarget } from '../../engine/hold.js';
import type { EngineContext } from '../../engine/engine-context.js';
import { releaseTraced, type ReleaseReply, type ReleaseSpec } from '../../engine/release.js';
import { extendHold } from '../../engine/extend.js';
import { HANDLE_OWN_BIT, HoldHandle } from '../../engine/handle.js';
import { leaseDeadline, monotonicNow } from '../../connection/time.js';
import { IllegalMonitorStateError, InvalidArgumentError, LockAcquireTimeoutError } from '../../errors.js';
import { checkFunction } from '../../checks/argument-checks.js';
import { checkLease, LOCK_DEFAULTS, parseLockOptions, requireTask, type LockOptions, type LockRequest } from '../lock-options.js';
import { currentTask, newTaskContext, ownerId, runInCurrentTaskOrNew, type TaskContext } from '../../tasks/task-context.js';
import { ORDER_KEY } from './order-key.js';
import { LockKeyCache, type LockKeys } from './keys.js';
import type { AcquireTerms, LockStore } from './lock-store.js';
import type { LockHandleOf, LockScope, RLockOf } from './types.js';

/** The process warning's code when concurrent branches of one task acquire one lock (see LockCore.firstAcquisition). */
export const TASK_BRANCHES_WARNING = 'RLOCK_TASK_BRANCHES';

/** The request of every call without options: one shared object, not one per call. */
const DEFAULT_REQUEST: LockRequest = parseLockOptions(undefined, 'lock');

/** A scope keeps its request while fn runs, so one without options shares DEFAULT_REQUEST. */
function requestOf(options: LockOptions | undefined, call: string): LockRequest {
  return options === undefined ? DEFAULT_REQUEST : parseLockOptions(options, call);
}

/** The reentrant lock ({@link RLockOf}), on one Redis or across Redlock masters: what differs is its {@link LockStore}. */
export class ReentrantLock<Token extends string | undefined = string | undefined> implements RLockOf<Token> {
  private readonly core: LockCore;

  constructor(
    readonly name: string,
    ctx: EngineContext,
    store: LockStore,
    /** `rlock.object` when not the store's (a leader election's lock: `leader`). */
    object?: string,
  ) {
    this.core = ctx.stateOf(LockCores, () => new LockCores(ctx)).of(store, object ?? store.variant.object);
  }

  /** From the client's bounded cache, not kept here: a lock object kept alive does not keep its names too. */
  get keys(): LockKeys {
    return this.core.keysOf(this.name);
  }

  /** Where this lock sorts in a multi-lock's global order: its full key. */
  get [ORDER_KEY](): string {
    return this.keys.lock;
  }

  // lock(), unlock() and acquire() are not async: each async layer costs two promises per call
  // (and an async-hook run each inside a task). A failed check still rejects.
  lock(options?: LockOptions): Promise<void> {
    let request: LockRequest;
    let acquiring: Promise<Hold | undefined>;
    try {
      request = requestOf(options, 'lock');
      acquiring = this.acquireChecked(requireTask(this.name, 'lock'), request);
    } catch (error) {
      return Promise.reject(error);
    }
    return acquiring.then((hold) => (hold ? undefined : this.timedOut(request)));
  }

  async tryLock(options?: LockOptions): Promise<boolean> {
    const request = parseLockOptions(options, 'tryLock', LOCK_DEFAULTS.tryLockWaitMs);
    const task = requireTask(this.name, 'tryLock');
    try {
      return (await this.acquireChecked(task, { ...request, failFast: true })) !== undefined;
    } catch (error) {
      throw unansweredFailure(error);
    }
  }

  unlock(): Promise<void> {
    try {
      return this.core.releaseFor(this.name, this.ownerOf(requireTask(this.name, 'unlock')));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  // Not async, nor anything inside: an open scope keeps only its promise, `resolve` and one reaction on
  // fn's promise, not a suspended async function's state. A failed check still rejects.
  withLock<T>(fn: (scope: LockScope<Token>) => T | Promise<T>, options?: LockOptions): Promise<T> {
    try {
      checkFunction(fn, 'withLock(fn)');
      const request = requestOf(options, 'withLock');
      // A check that fails in the task (acquireChecked's) throws out of it, to the same rejection.
      return runInCurrentTaskOrNew(() => this.scoped(currentTask() as TaskContext, fn, request));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private scoped<T>(task: TaskContext, fn: (scope: LockScope<Token>) => T | Promise<T>, request: LockRequest): Promise<T> {
    const acquiring = this.acquireChecked(task, request);
    const core = this.core;
    // Only `resolve` is kept while fn runs (a failure resolves to a rejected promise).
    return new Promise<T>((resolve) => {
      acquiring.then(
        (hold) => (hold ? core.runScope(hold, fn, resolve) : resolve(this.timedOut(request))),
        (error: unknown) => resolve(Promise.reject(error)),
      );
    });
  }

  acquire(options?: LockOptions): Promise<LockHandleOf<Token>> {
    let request: LockRequest;
    let acquiring: Promise<Hold | undefined>;
    try {
      request = requestOf(options, 'acquire');
      acquiring = this.acquireChecked(currentTask() ?? newTaskContext(), request);
    } catch (error) {
      return Promise.reject(error);
    }
    return acquiring.then((hold) => (hold ? new ReentrantLockHandle<Token>(this.core, hold) : this.timedOut(request)));
  }

  async isLocked(): Promise<boolean> {
    this.core.ctx.assertOpen();
    return this.core.store.isLocked(this.keys, this.name);
  }

  async isHeldByCurrentTask(): Promise<boolean> {
    const owner = this.ownerOf(requireTask(this.name, 'isHeldByCurrentTask'));
    const { ctx, store, mode } = this.core;
    ctx.assertOpen();
    const keys = this.keys;
    // A hold known lost, or past its deadline, is not held whatever the server says: safety first.
    if (ctx.holds.current(keys.lock, mode, owner)?.certain !== true) return false;
    return (await store.ownerHold(keys, this.name, owner)).held;
  }

  async getHoldCount(): Promise<number> {
    const owner = this.ownerOf(requireTask(this.name, 'getHoldCount'));
    const { ctx, store, mode } = this.core;
    ctx.assertOpen();
    const keys = this.keys;
    const hold = ctx.holds.current(keys.lock, mode, owner);
    if (hold?.certain !== true) return 0;
    const read = await store.ownerHold(keys, this.name, owner);
    if (!read.held || !hold.certain) return 0;
    return store.counting === 'server' ? read.count : hold.count;
  }

  async remainTimeToLive(): Promise<number> {
    this.core.ctx.assertOpen();
    return this.core.store.pttl(this.keys, this.name);
  }

  async forceUnlock(): Promise<boolean> {
    const { ctx, store, mode } = this.core;
    ctx.assertOpen();
    const keys = this.keys;
    const released = await store.forceUnlock(keys, this.name);
    for (const hold of ctx.holds.holdsOf(keys.lock, mode)) hold.lose('forced');
    return released;
  }

  async extend(leaseMs: number): Promise<void> {
    const checked = checkLease(leaseMs, 'extend');
    const owner = this.ownerOf(requireTask(this.name, 'extend'));
    await this.core.extendHeld(this.name, this.core.ctx.holds.current(this.keys.lock, this.core.mode, owner), checked);
  }

  /** waitMs ran out: the error names the holder where the client can tell. */
  private async timedOut(request: LockRequest): Promise<never> {
    throw new LockAcquireTimeoutError(this.name, request.waitMs ?? 0, { holder: await this.core.ctx.holderOf?.(this.name) });
  }

  /** Checks made before anything is sent, then the engine's loop. Not async: one promise layer less on the hot path. */
  private acquireChecked(task: TaskContext, request: LockRequest): Promise<Hold | undefined> {
    const { ctx, store, mode } = this.core;
    const keys = this.keys;
    ctx.assertOpen();
    request.signal?.throwIfAborted();
    if (request.leaseMs === undefined && !ctx.canRenew) {
      throw new InvalidArgumentError(`lock "${this.name}": leaseMs is required, this client has no watchdog to renew leases`);
    }
    const owner = this.ownerOf(task);
    store.beforeAcquire?.(ctx.holds, keys, owner);
    const { exclusive, queueLocally, waitersKeepPlace } = store.variant;
    const target: HoldTarget = { name: this.name, key: keys.lock, mode, kind: store.kind, owner, exclusive, driftFactor: store.driftFactor };
    // The store is told only what it reads, in an object of this call's own (Redlock keeps the call's state by it).
    const terms: AcquireTerms = { waits: request.waits, failFast: request.failFast === true };
    const send = (op: string, leaseMs: number): Promise<AcquireReply> => store.acquire(keys, owner, leaseMs, op, terms);
    const tries = new HoldAttempt(ctx, target, request.leaseMs, request.maxLeaseMs, send, (op) => store.cancel(keys, owner, op));
    // Where the client counts, a hold of the owner is reentered here; otherwise the try is the attempt itself (no layer around it).
    const tryOnce = (signal: AbortSignal | undefined): Promise<TryOutcome<Hold>> => {
      const current = store.counting === 'client' ? ctx.holds.current(keys.lock, mode, owner) : undefined;
      return current?.active ? this.reenterOrAttempt(current, signal, tries) : attempt(ctx, tries, signal);
    };
    const leaveQueue = store.leaveQueue?.bind(store);
    const held = ctx.holds.current(keys.lock, mode, owner)?.active === true;
    return acquireObserved(
      ctx,
      {
        name: this.name,
        channel: keys.channel,
        strategy: store.waitStrategy,
        id: owner,
        headOnly: store.headOnly,
        keepsPlace: waitersKeepPlace,
        exclusive,
        onMessage: this.core.onMessage,
        arrival: held ? 'try' : queueLocally ? 'queue' : 'join',
        queuesOthers: exclusive,
        // The owner's place stays while a branch of the task still waits here; a hold a branch counts on
        // stays by its token (a hand-off nobody claimed goes to the next). Run in the owner's turn: after a
        // try cut off at waitMs that is still out, before the owner's next operation.
        leave:
          leaveQueue &&
          (() =>
            ctx.chains.run(keys.lock, owner, () => {
              if (ctx.queues.get(keys.channel)?.waiters.some((waiter) => waiter.id === owner)) return Promise.resolve();
              const held = ctx.holds.current(keys.lock, mode, owner);
              return leaveQueue(keys, owner, held?.active ? (held.token ?? '') : '');
            })),
        waitMs: request.waitMs,
        signal: request.signal,
        tryOnce,
        takeHandOff: store.takeHandOff && ((handOff) => store.takeHandOff?.(target, handOff, request.leaseMs, request.maxLeaseMs)),
        giveBack: (hold) => this.core.releaseFor(this.name, owner, hold),
        ended: held || !this.core.sharesBranches ? undefined : this.core.firstAcquisition(this.name, keys.lock, owner),
      },
      request.failFast === true ? this.core.failFastLabel : this.core.waitLabel,
    );
  }

  /** A try where the owner holds the lock already (the client counts): reentered here, else attempted anew. */
  private async reenterOrAttempt(current: Hold, signal: AbortSignal | undefined, tries: HoldAttempt): Promise<TryOutcome<Hold>> {
    const { ctx } = this.core;
    const reentered = await ctx.chains.run(current.key, current.owner, () => this.reenterHere(current, signal, tries));
    return reentered ? { grant: current } : attempt(ctx, tries, signal);
  }

  /**
   * A nested acquisition counted by the client, with the lease and cap of the call's attempt (`tries`): the store is reached
   * only to extend a lease that must end later than the hold's. False when the hold is lost: the caller acquires anew.
   */
  private async reenterHere(hold: Hold, signal: AbortSignal | undefined, tries: HoldAttempt): Promise<boolean> {
    const { store } = this.core;
    if (!hold.active) return false;
    if (hold.maxLeaseAt !== undefined && monotonicNow() >= hold.maxLeaseAt) {
      // Past its cap (a late timer has not said so yet): never counted on again.
      hold.lose('maxLease');
      return false;
    }
    if (!hold.certain) {
      // Past its deadline the lease may have run out: others may hold the lock.
      hold.lose(hold.renewed ? 'unreachable' : 'expired');
      return false;
    }
    const { leaseMs } = tries;
    let sentAt: number | undefined;
    const covered = (hold.renewed && leaseMs <= hold.leaseMs) || leaseDeadline(monotonicNow(), leaseMs, store.driftFactor) <= hold.deadline;
    if (!covered) {
      sentAt = monotonicNow();
      const verdict = await store.extend(hold, leaseMs);
      if (!hold.active) return false;
      if (verdict !== 'renewed') {
        hold.lose(verdict === 'gone' ? 'expired' : 'taken');
        return false;
      }
      // An extension landing after an abort (or waitMs) stays (it only lengthens the lease); the acquisition is not counted.
      signal?.throwIfAborted();
    }
    tries.reentered(hold, sentAt);
    return true;
  }

  private ownerOf(task: TaskContext): string {
    return ownerId(this.core.ctx.clientId, task);
  }
}

/**
 * Shared by every lock object of one client, store and label. Handles and scopes keep this and their hold,
 * not their lock object: a caller making a lock object per acquisition does not keep one per held lock.
 */
class LockCore {
  /** The registry mode of its holds (the variant's). */
  readonly mode: string;
  private readonly keyCache: LockKeyCache;
  // Made once per core, not per acquisition: what the engine's wait loop is given.
  readonly onMessage = (payload: string, queue: WaitQueue): boolean => this.store.onMessage(payload, queue);
  readonly waitLabel: AcquireLabel;
  readonly failFastLabel: AcquireLabel;

  /** Branches of one task would share a hold: the lock is reentrant and exclusive (a shared mode's owners share anyway). */
  readonly sharesBranches: boolean;
  /**
   * First acquisitions under way (the owner had no hold when each began), by lock key then owner: how many. Keyed by the
   * key's and the owner's own strings (cached, their hashes with them), not a string made of both per call.
   */
  private readonly firstPending = new Map<string, FirstPending | Map<string, FirstPending>>();

  constructor(
    readonly ctx: EngineContext,
    readonly store: LockStore,
    readonly object: string,
    private readonly cores: LockCores,
  ) {
    this.keyCache = ctx.stateOf(LockKeyCache, () => new LockKeyCache(ctx.keyPrefix));
    this.mode = store.variant.mode;
    this.sharesBranches = store.variant.reentrant && store.variant.exclusive;
    this.waitLabel = { object, refusal: 'timeout' };
    this.failFastLabel = { object, refusal: 'not_acquired' };
  }

  keysOf(name: string): LockKeys {
    return this.keyCache.keysOf(this.store, name);
  }

  /**
   * Counts a first acquisition of `owner` on `key` until the returned call ends it. One that begins while another is
   * under way cannot be a nested call (that would wait for its own caller): it is a concurrent branch of one task,
   * which shares the task's ownership, so the two do not exclude each other. Warned once per client.
   */
  firstAcquisition(name: string, key: string, owner: string): () => void {
    const slot = this.firstPending.get(key);
    let pending = slot instanceof Map ? slot.get(owner) : slot?.owner === owner ? slot : undefined;
    if (pending === undefined) {
      pending = { owner, count: 1 };
      if (slot === undefined) this.firstPending.set(key, pending);
      else if (slot instanceof Map) slot.set(owner, pending);
      else this.firstPending.set(key, new Map<string, FirstPending>().set(slot.owner, slot).set(owner, pending));
    } else {
      pending.count++;
      if (!this.cores.branchesWarned) {
        this.cores.branchesWarned = true;
        process.emitWarning(
          `rlock: lock "${name}" was acquired by one task (${owner.slice(owner.lastIndexOf(':') + 1)}) while that task's first acquisition ` +
            'of it was still under way: concurrent branches of one task (a Promise.all) share its ownership, so they do not ' +
            'exclude each other. Run each branch that must be exclusive in its own client.task(fn).',
          { code: TASK_BRANCHES_WARNING },
        );
      }
    }
    const counted = pending;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--counted.count > 0) return;
      const current = this.firstPending.get(key);
      if (current === counted) this.firstPending.delete(key);
      else if (current instanceof Map) {
        current.delete(owner);
        if (current.size === 0) this.firstPending.delete(key);
      }
    };
  }

  /**
   * Runs fn on `hold` (scoped meanwhile, so a bare unlock() may not take it), releases it, then resolves
   * with fn's value, or fn's error (a failed release after a failed fn is only reported).
   */
  runScope<T>(hold: Hold, fn: (scope: HoldScope<never>) => T | PromiseLike<T>, resolve: (value: T | Promise<T>) => void): void {
    hold.scoped++;
    let result: T | PromiseLike<T>;
    try {
      result = fn(new HoldScope(hold));
    } catch (error) {
      this.scopeFailed(hold, error, resolve);
      return;
    }
    // As `await` reads it: a native promise as it is, any other object through Promise.resolve (a thenable), a primitive at once.
    if (result instanceof Promise || (result !== null && (typeof result === 'object' || typeof result === 'function'))) {
      (result instanceof Promise ? (result as Promise<T>) : Promise.resolve(result)).then(
        (value) => this.scopeDone(hold, value, resolve),
        (error: unknown) => this.scopeFailed(hold, error, resolve),
      );
    } else this.scopeDone(hold, result, resolve);
  }

  private scopeDone<T>(hold: Hold, value: T, resolve: (value: T | Promise<T>) => void): void {
    hold.scoped--;
    this.releaseFor(hold.name, hold.owner, hold).then(
      () => resolve(value),
      (error: unknown) => resolve(Promise.reject(error)),
    );
  }

  private scopeFailed(hold: Hold, error: unknown, resolve: (value: Promise<never>) => void): void {
    hold.scoped--;
    // The caller sees fn's error; a failed release is only reported, unless the hold was lost (reported already).
    void this.releaseFor(hold.name, hold.owner, hold)
      .catch((failure: unknown) => {
        if (hold.state !== 'lost') this.ctx.backgroundError(failure);
      })
      .then(() => resolve(Promise.reject(error)));
  }

  async extendHeld(name: string, hold: Hold | undefined, leaseMs: number): Promise<void> {
    if (!hold || hold.count <= 0) throw new IllegalMonitorStateError(`lock "${name}" is not held by the current task (nothing was extended)`);
    await extendHold(this.ctx, hold, leaseMs, this.store, `lock "${name}" is not held`);
  }

  /** Releases `own` when the caller knows its hold (a handle, withLock), else the owner's newest hold. */
  // Not async (see lock()), and no `.then` of its own: the reply is read in the engine's reaction.
  releaseFor(name: string, owner: string, own?: Hold): Promise<void> {
    const { ctx, store } = this;
    const keys = this.keysOf(name);
    const hold = own ?? ctx.holds.current(keys.lock, this.mode, owner);
    if (!own && hold?.active && hold.count <= hold.scoped) {
      const message = `unlock(): "${name}" is held by the current task only through withLock() or a handle, which releases it when it ends (nothing was released)`;
      return Promise.reject(new IllegalMonitorStateError(message));
    }
    return releaseTraced(ctx, this.object, hold, name, new LockRelease(ctx, store, keys, hold as Hold));
  }
}

/**
 * One release of a lock's hold, its calls as methods rather than three closures per release. The engine uses it only once
 * the hold is known (it refuses a release of nothing first). Where the client counts, a nested release never reaches the store.
 */
class LockRelease implements ReleaseSpec {
  constructor(
    private readonly ctx: EngineContext,
    private readonly store: LockStore,
    private readonly keys: LockKeys,
    private readonly hold: Hold,
  ) {}

  send(op: string): Promise<ReleaseReply> {
    const { hold } = this;
    return this.store.counting === 'client' && hold.count > 1
      ? Promise.resolve({ released: true, remaining: hold.count - 1 })
      : this.store.release(this.keys, hold, op);
  }

  finish(op: string): Promise<'released' | 'gone'> {
    return this.store.finishRelease(this.keys, this.hold, op);
  }

  released(reply: ReleaseReply & { readonly released: true }): void {
    if (reply.remaining === 0 && (reply.receivers ?? 0) > 1) {
      // Other clients' waiters heard it too (ours count one): let them try first.
      this.ctx.queues.get(this.keys.channel)?.yieldFor();
    }
    // Once the released hold is gone here: the waiter's grant excludes every other hold of this client.
    this.store.handedOver?.(this.keys, reply);
  }
}

/** One owner's first acquisitions of one lock under way. */
interface FirstPending {
  readonly owner: string;
  count: number;
}

class LockCores {
  private readonly byStore = new WeakMap<LockStore, Map<string, LockCore>>();
  /** RLOCK_TASK_BRANCHES is told once per client. */
  branchesWarned = false;

  constructor(private readonly ctx: EngineContext) {}

  of(store: LockStore, object: string): LockCore {
    let byObject = this.byStore.get(store);
    if (byObject === undefined) this.byStore.set(store, (byObject = new Map<string, LockCore>()));
    let core = byObject.get(object);
    if (core === undefined) byObject.set(object, (core = new LockCore(this.ctx, store, object, this)));
    return core;
  }
}

/** withLock's scope: the signal is read through, so a scope that never looks at it builds no AbortController. */
class HoldScope<Token extends string | undefined> implements LockScope<Token> {
  constructor(private readonly hold: Hold) {}

  get signal(): AbortSignal {
    return this.hold.signal;
  }

  get token(): Token {
    return this.hold.token as Token;
  }
}

/** `bits` of a lock's handle: its acquisition counts as scoped until its release is first called. */
const COUNTED = HANDLE_OWN_BIT;

/** {@link LockHandleOf}: its task is its hold's owner, rebuilt by `run()`; it keeps its core, hold and flags only. */
class ReentrantLockHandle<Token extends string | undefined> extends HoldHandle implements LockHandleOf<Token> {
  constructor(
    private readonly core: LockCore,
    hold: Hold,
  ) {
    super(hold);
    this.bits |= COUNTED;
    hold.scoped++;
  }

  override get token(): Token {
    return this.hold.token as Token;
  }

  unlock(): Promise<void> {
    return this.end();
  }

  protected releaseOnce(): Promise<void> {
    if ((this.bits & COUNTED) !== 0) {
      this.bits &= ~COUNTED;
      this.hold.scoped--;
    }
    return this.core.releaseFor(this.hold.name, this.hold.owner, this.hold);
  }

  protected extendBy(leaseMs: number): Promise<void> {
    return this.core.extendHeld(this.hold.name, this.hold, checkLease(leaseMs, 'extend'));
  }
}
