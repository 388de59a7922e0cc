import type { LockOptions } from '../lock-options.js';

/** What `withLock` hands to its function; `Token` is `string` on one Redis, `undefined` on Redlock. */
export interface LockScope<Token extends string | undefined = string> {
  /** Aborts with a LockLostError (reason on it) the moment the hold is known lost. */
  readonly signal: AbortSignal;
  /** Fencing token (decimal, grows with every new hold): have the resource refuse writes with a smaller one. `undefined` on Redlock. */
  readonly token: Token;
}

/**
 * One acquisition from `acquire()`, of the current task or else a fresh owner; released by `unlock()` or `await using`.
 * A bare `LockHandle` is a handle of either kind (see {@link RLock}); `LockHandle<string>` one with a fencing token.
 */
export type LockHandle<Token extends string | undefined = string | undefined> = Token extends unknown ? LockHandleOf<Token> : never;

/** What a {@link LockHandle} of one kind has: `LockHandleOf<string>` on one Redis, `LockHandleOf<undefined>` on Redlock. */
export interface LockHandleOf<Token extends string | undefined> extends AsyncDisposable {
  /** The lock's name. */
  readonly name: string;
  /** See {@link LockScope.token}. */
  readonly token: Token;
  /** See {@link LockScope.signal}. */
  readonly signal: AbortSignal;
  /**
   * Runs `fn` as this handle's owner, so nested acquisitions of the same lock reenter it.
   * @throws IllegalMonitorStateError once the handle is released.
   */
  run<T>(fn: () => T | Promise<T>): Promise<T>;
  /**
   * Releases this acquisition.
   * @throws IllegalMonitorStateError when already released
   * @throws LockLostError when the hold was lost meanwhile
   */
  unlock(): Promise<void>;
  /**
   * Extends the lease to max(current, `leaseMs` from now); a watchdog lease is renewed to it from then on.
   * @throws IllegalMonitorStateError when the handle was released
   * @throws LockLostError when the hold was lost
   */
  extend(leaseMs: number): Promise<void>;
}

/**
 * A reentrant distributed lock (Redisson's RLock). The Java-style calls (`lock`, `tryLock`, `unlock`,
 * `isHeldByCurrentTask`, `getHoldCount`) need a task: `client.task(fn)`, `withLock`, or a request middleware.
 * A single-server lock is an `RLock<string>` (its token fences), a Redlock lock an `RLock<undefined>`. A bare `RLock`
 * is either (`RLock<string> | RLock<undefined>`): `const lock: RLock = …getLock(name)` compiles for both clients and
 * keeps the kind it was given; a parameter or field typed `RLock` sees a token that may be `undefined`.
 */
export type RLock<Token extends string | undefined = string | undefined> = Token extends unknown ? RLockOf<Token> : never;

/** What an {@link RLock} of one kind has: `RLockOf<string>` on one Redis, `RLockOf<undefined>` on Redlock. */
export interface RLockOf<Token extends string | undefined> {
  /** As given to `getLock(name)` and the like. */
  readonly name: string;
  /**
   * Acquires the lock for the current task, waiting up to `waitMs`; reentrant, so unlock as often.
   * @throws IllegalMonitorStateError outside a task
   * @throws LockAcquireTimeoutError when `waitMs` runs out
   */
  lock(options?: LockOptions): Promise<void>;
  /** Like `lock`, but resolves false when not acquired within `waitMs` (default 0). */
  tryLock(options?: LockOptions): Promise<boolean>;
  /**
   * Releases one hold of the current task taken by `lock()` or `tryLock()` (not one of withLock() or a handle).
   * @throws IllegalMonitorStateError when the task does not hold it, or holds it only through withLock() or a handle
   * @throws LockLostError when the task held it but it is gone (expired, taken, forced)
   */
  unlock(): Promise<void>;
  /**
   * Runs `fn` holding the lock, in the current task or a new one; fn's error wins over a release failure.
   * @throws LockLostError when `fn` resolves but the hold was lost meanwhile
   */
  withLock<T>(fn: (scope: LockScope<Token>) => T | Promise<T>, options?: LockOptions): Promise<T>;
  /** Acquires and returns a handle; works inside and outside tasks. */
  acquire(options?: LockOptions): Promise<LockHandleOf<Token>>;
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
   * Extends the current task's hold to max(current, `leaseMs` from now).
   * @throws IllegalMonitorStateError outside a task, or when the task does not hold it
   * @throws LockLostError when the hold was lost
   */
  extend(leaseMs: number): Promise<void>;
}
