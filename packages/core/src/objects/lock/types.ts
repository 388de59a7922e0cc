import type { LockOptions } from '../lock-options.js';

/**
 * What `withLock` hands to its function. `Token` is the fencing token's type:
 * `string` on one Redis (the default, so `LockScope` is the single-server
 * client's), `undefined` on Redlock (see {@link LockScope.token}).
 */
export interface LockScope<Token extends string | undefined = string> {
  /** Aborts with a LockLostError (reason on it) the moment the hold is known lost. */
  readonly signal: AbortSignal;
  /**
   * Fencing token of the hold, a decimal string of an integer that grows with
   * every new hold of the lock. Pass it to the resource and have it refuse
   * writes carrying a smaller token than it has seen. `undefined` on Redlock.
   */
  readonly token: Token;
}

/**
 * One acquisition, as returned by `acquire()`. Inside a task it is a hold of that
 * task; outside one it belongs to a fresh owner that only this handle carries.
 * Released by `unlock()` or, with `await using`, when the scope ends.
 */
export interface LockHandle<Token extends string | undefined = string> extends AsyncDisposable {
  /** The lock's name. */
  readonly name: string;
  /** See {@link LockScope.token}. */
  readonly token: Token;
  /** See {@link LockScope.signal}. */
  readonly signal: AbortSignal;
  /**
   * Runs `fn` as this handle's owner, so nested acquisitions of the same lock
   * reenter it.
   * @throws IllegalMonitorStateError (as a rejection) once the handle is released.
   */
  run<T>(fn: () => T | Promise<T>): Promise<T>;
  /**
   * Releases this acquisition.
   * @throws IllegalMonitorStateError when already released
   * @throws LockLostError when the hold was lost meanwhile
   */
  unlock(): Promise<void>;
  /**
   * Extends the hold's lease to `leaseMs` from now (the TTL becomes
   * max(current, leaseMs); never shortened). A fixed lease then ends later; a
   * watchdog lease is renewed to the longer lease from then on.
   * @throws IllegalMonitorStateError when the handle was released
   * @throws LockLostError when the hold was lost (the server no longer has it)
   */
  extend(leaseMs: number): Promise<void>;
}

/**
 * A reentrant distributed lock (Redisson's RLock). The Java-style calls (`lock`,
 * `tryLock`, `unlock`, `isHeldByCurrentTask`, `getHoldCount`) need a task:
 * run them inside `client.task(fn)`, `withLock`, or a request middleware.
 *
 * `Token` defaults to `string`, the token of every lock of the single-server
 * client, so `const lock: RLock = client.getLock(name)` keeps it. A Redlock
 * lock is an `RLock<undefined>`; code that takes either kind (as a multi-lock
 * does) takes an `RLock<string | undefined>`.
 */
export interface RLock<Token extends string | undefined = string> {
  /** The lock's name, as given to `getLock(name)` and the like. */
  readonly name: string;
  /**
   * Acquires the lock for the current task, waiting as long as needed (or
   * `waitMs`). Reentrant: the same task may call it again and must unlock as often.
   * @throws IllegalMonitorStateError outside a task
   * @throws LockAcquireTimeoutError when `waitMs` runs out
   */
  lock(options?: LockOptions): Promise<void>;
  /** Like `lock`, but resolves false when not acquired within `waitMs` (default 0). */
  tryLock(options?: LockOptions): Promise<boolean>;
  /**
   * Releases one hold of the current task: one taken by `lock()` or
   * `tryLock()`. An acquisition of `withLock()` or of a handle is released by
   * its scope or handle, so unlock() refuses to release it.
   * @throws IllegalMonitorStateError when the task does not hold it, or holds it only through withLock() or a handle
   * @throws LockLostError when the task held it but it is gone (expired, taken, forced)
   */
  unlock(): Promise<void>;
  /**
   * Runs `fn` holding the lock, in the current task or a new one, and returns
   * what it returns. If `fn` throws, that error wins over any release failure;
   * if `fn` resolves but the hold was lost meanwhile, rejects with LockLostError.
   */
  withLock<T>(fn: (scope: LockScope<Token>) => T | Promise<T>, options?: LockOptions): Promise<T>;
  /** Acquires and returns a handle; works inside and outside tasks. */
  acquire(options?: LockOptions): Promise<LockHandle<Token>>;
  /** True when anyone holds the lock. */
  isLocked(): Promise<boolean>;
  /** True when the current task holds it (read from Redis). */
  isHeldByCurrentTask(): Promise<boolean>;
  /** The current task's hold count (read from Redis; 0 when not held). */
  getHoldCount(): Promise<number>;
  /** Remaining lease in ms; negative when free (−2) or without a TTL (−1), as PTTL. */
  remainTimeToLive(): Promise<number>;
  /** Admin: releases whoever holds it and wakes waiters; true if a holder was released. */
  forceUnlock(): Promise<boolean>;
  /**
   * Extends the current task's hold to `leaseMs` from now (the TTL becomes
   * max(current, leaseMs)): node-redlock's `extend`, for a hold taken Java-style.
   * @throws IllegalMonitorStateError outside a task, or when the task does not hold it
   * @throws LockLostError when the hold was lost
   */
  extend(leaseMs: number): Promise<void>;
}
