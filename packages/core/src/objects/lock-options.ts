import { IllegalMonitorStateError, InvalidArgumentError } from '../errors.js';
import { currentTask, type TaskContext } from '../tasks/task-context.js';
import { checkDurationMs, checkKnownKeys, checkOptionsObject, checkSignal } from '../checks/argument-checks.js';

/** Options of the waiting calls: `lock`, `tryLock`, `acquire`, `withLock`. */
export interface LockOptions {
  /**
   * Fixed lease in ms (3 to 2^31−1), never renewed. Without it the hold takes
   * the watchdog lease (`watchdogTimeoutMs`), renewed every third of it.
   * @default undefined (a watchdog lease)
   */
  readonly leaseMs?: number;
  /**
   * How long to wait, in ms (0: try once). When it runs out, `tryLock()`
   * resolves false and the others reject with LockAcquireTimeoutError.
   * @default undefined (without limit); `tryLock()`: 0
   */
  readonly waitMs?: number;
  /** Aborts the wait; the call rejects with `signal.reason`. @default undefined */
  readonly signal?: AbortSignal;
  /**
   * A cap on renewal, in ms (1 to 2^31−1) from the acquisition's send: then
   * the watchdog stops, the key is deleted (if still its own) and the hold is
   * lost with reason `'maxLease'`. Guards against a forgotten `unlock()`.
   * On the server a capped hold lives at most `maxLeaseMs` + its lease; a
   * stalled event loop lets the lease lapse first (`'unreachable'`). Nested
   * acquisitions share one hold: the earliest cap applies.
   * @default undefined (no cap)
   */
  readonly maxLeaseMs?: number;
}

/** The defaults of {@link LockOptions}, in one frozen object. */
export const LOCK_DEFAULTS = Object.freeze({
  /** No fixed lease: the watchdog's. */
  leaseMs: undefined,
  /** `lock()`, `acquire()`, `withLock()`: wait without limit. */
  waitMs: undefined,
  /** `tryLock()`: try once. */
  tryLockWaitMs: 0,
  /** No cap on renewal. */
  maxLeaseMs: undefined,
});

/** The checked options of one waiting call. */
export interface LockRequest {
  /** Fixed lease in ms; undefined: a watchdog lease. */
  readonly leaseMs: number | undefined;
  /** How long to wait in ms; undefined: without limit (0: try once). */
  readonly waitMs: number | undefined;
  readonly signal: AbortSignal | undefined;
  /** Cap on renewal in ms, counted from the send of the acquisition; undefined: none. */
  readonly maxLeaseMs?: number | undefined;
  /** tryLock: give up at once when the outcome cannot be decided (Redlock: no quorum possible). */
  readonly failFast?: boolean;
}

/** Shortest lease accepted: lease − drift (lease × 1 % + 2 ms) must stay positive. */
export const MIN_LEASE_MS = 3;

const OPTION_NAMES = ['leaseMs', 'waitMs', 'signal', 'maxLeaseMs'] as const;

/**
 * Checks the options of a waiting call before anything is sent.
 * @throws InvalidArgumentError naming the call and the option
 */
export function parseLockOptions(options: unknown, call: string): LockRequest {
  const raw = checkOptionsObject(options, `${call}() options`);
  checkKnownKeys(raw, OPTION_NAMES, `${call}() options`);
  // lease − drift (1 % + 2 ms) must be positive, or every grant is already late.
  const leaseMs =
    raw.leaseMs === undefined
      ? LOCK_DEFAULTS.leaseMs
      : checkDurationMs(raw.leaseMs, `${call}(): leaseMs`, MIN_LEASE_MS, 'the lease minus its drift allowance must be positive');
  return {
    leaseMs,
    waitMs: raw.waitMs === undefined ? LOCK_DEFAULTS.waitMs : checkDurationMs(raw.waitMs, `${call}(): waitMs`, 0),
    signal: checkSignal(raw.signal, `${call}(): signal`),
    maxLeaseMs: raw.maxLeaseMs === undefined ? LOCK_DEFAULTS.maxLeaseMs : checkDurationMs(raw.maxLeaseMs, `${call}(): maxLeaseMs`),
  };
}

/**
 * The caller's task, for the Java-style calls that need one.
 * @throws IllegalMonitorStateError outside any task, naming task, withLock and acquire
 */
export function requireTask(objectName: string, call: string): TaskContext {
  const task = currentTask();
  if (!task) {
    throw new IllegalMonitorStateError(
      `${call}() on "${objectName}" needs a task: run it inside client.task(fn) or withLock(fn), ` + 'or use acquire() for a handle that works anywhere',
    );
  }
  return task;
}

/** The lease of `extend(leaseMs)`: required, checked like every `leaseMs`. */
export function checkLease(leaseMs: unknown, call: string): number {
  const checked = parseLockOptions({ leaseMs }, call).leaseMs;
  if (checked === undefined) throw new InvalidArgumentError(`${call}(): leaseMs is required, got undefined`);
  return checked;
}
