import type { LockOptions } from '../lock-options.js';

/** Options of `acquire`/`tryAcquire`, as a lock's: `leaseMs` is a fixed lease; without it the watchdog renews the permit. */
export type PermitOptions = LockOptions;

/** One leased permit, released by `release()` or at the end of an `await using` scope. */
export interface PermitHandle extends AsyncDisposable {
  /** The semaphore's name. */
  readonly name: string;
  /** The permit's id (`<clientId>:<n>`): `semaphore.release(id)` releases it from anywhere. */
  readonly id: string;
  /** Fencing token, a decimal string from the slot's counter (shared with its locks): always increasing. */
  readonly token: string;
  /** Aborts with a LockLostError (reason on it) the moment the permit is known lost (its lease lapsed, the client closed). */
  readonly signal: AbortSignal;
  /**
   * Gives the permit back; once given back, a call rejects with IllegalMonitorStateError.
   * @throws LockLostError when the permit's lease ran out meanwhile
   */
  release(): Promise<void>;
  /**
   * Extends the permit's lease to `leaseMs` from now (never shortened; a watchdog lease is renewed to the longer one).
   * @throws IllegalMonitorStateError when the handle was released
   * @throws LockLostError when the permit lapsed
   */
  extend(leaseMs: number): Promise<void>;
}

/**
 * A semaphore of leased permits (Redisson's RPermitExpirableSemaphore), each with an id, a fencing token, a lease and a
 * signal; a crashed holder's permit comes back when its lease lapses.
 *
 * @example
 * const gpus = client.getPermitExpirableSemaphore('gpu');
 * await gpus.trySetPermits(4);
 * await using gpu = await gpus.acquire({ waitMs: 60_000 });
 * await train(model, { signal: gpu.signal, fence: gpu.token });
 */
export interface RPermitExpirableSemaphore {
  /** The semaphore's name. */
  readonly name: string;
  /** Sets the number of permits, only when the semaphore is not set yet; true when it set them. */
  trySetPermits(permits: number): Promise<boolean>;
  /** Adds `delta` permits (negative: removes them; the count may go below zero). Resolves the available count after. */
  addPermits(delta: number): Promise<number>;
  /**
   * Takes one permit, waiting until one is available or `signal` aborts (rejects with its reason); the permit belongs to its handle.
   * @throws InvalidArgumentError for a bad option, or no `leaseMs` on a client without a watchdog
   * @throws LockAcquireTimeoutError when `waitMs` runs out
   */
  acquire(options?: PermitOptions): Promise<PermitHandle>;
  /** Like `acquire`, but resolves undefined when no permit came within `waitMs` (default 0: one try). */
  tryAcquire(options?: PermitOptions): Promise<PermitHandle | undefined>;
  /**
   * Releases the permit `id`, held by this client or any other.
   * @throws IllegalMonitorStateError when no permit `id` is held (released, or unknown): nothing changed
   * @throws LockLostError when this client held it and its lease lapsed
   */
  release(id: string): Promise<void>;
  /** The available count, after lapsed permits were given back. */
  availablePermits(): Promise<number>;
}
