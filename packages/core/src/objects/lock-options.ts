import { IllegalMonitorStateError, InvalidArgumentError } from '../errors.js';
import { currentTask, type TaskContext } from '../tasks/task-context.js';
import { checkDurationMs, checkKnownKeys, checkOptionsObject, checkSignal } from '../checks/argument-checks.js';

/** Options of the waiting calls: `lock`, `tryLock`, `acquire`, `withLock`. */
export interface LockOptions {
  /**
   * Fixed lease in ms (3 to 2^31−1), never renewed; without it the watchdog lease, renewed every third of it.
   * @default undefined (a watchdog lease)
   */
  readonly leaseMs?: number;
  /**
   * How long to wait in ms (0: try once); then `tryLock()` resolves false, the others reject with LockAcquireTimeoutError.
   * @default undefined (without limit); `tryLock()`: 0
   */
  readonly waitMs?: number;
  /** Aborts the wait; the call rejects with `signal.reason`. @default undefined */
  readonly signal?: AbortSignal;
  /**
   * Cap on renewal in ms (1 to 2^31−1) from the acquisition's send, against a forgotten `unlock()`: then the
   * hold is lost (`'maxLease'`) and its key deleted. Nested acquisitions share one hold: the earliest cap applies.
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

/** The checked options of one waiting call, resolved once where they are parsed: later steps read these, never the options. */
export interface LockRequest {
  /** Fixed lease in ms; undefined: the watchdog's, renewed. */
  readonly leaseMs: number | undefined;
  /** undefined: without limit; 0: try once. */
  readonly waitMs: number | undefined;
  /** False when the call tries once (`waitMs` 0): a refusal leaves no waiter behind in Redis. */
  readonly waits: boolean;
  readonly signal: AbortSignal | undefined;
  readonly maxLeaseMs?: number | undefined;
  /** tryLock: give up at once when the outcome cannot be decided (Redlock: no quorum possible). */
  readonly failFast?: boolean;
}

/** Shortest lease accepted: lease − drift (lease × 1 % + 2 ms) must stay positive. */
export const MIN_LEASE_MS = 3;

const OPTION_NAMES = ['leaseMs', 'waitMs', 'signal', 'maxLeaseMs'] as const;

/**
 * `defaultWaitMs`: the call's own wait when none is given (`tryLock()`: 0).
 * @throws InvalidArgumentError naming the call and the option
 */
export function parseLockOptions(options: unknown, call: string, defaultWaitMs: number | undefined = LOCK_DEFAULTS.waitMs): LockRequest {
  // Every lock() with options comes here: its own enumerable keys are read in place, each once (an inherited option is not
  // one, as checkOptionsObject says), rather than copied into a dictionary object first.
  let leaseMs: unknown;
  let waitMs: unknown;
  let signal: unknown;
  let maxLeaseMs: unknown;
  if (options !== undefined) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) checkOptionsObject(options, `${call}() options`);
    const given = options as Record<string, unknown>;
    for (const key of Object.keys(given)) {
      if (key === 'leaseMs') leaseMs = given.leaseMs;
      else if (key === 'waitMs') waitMs = given.waitMs;
      else if (key === 'signal') signal = given.signal;
      else if (key === 'maxLeaseMs') maxLeaseMs = given.maxLeaseMs;
      else checkKnownKeys(given, OPTION_NAMES, `${call}() options`);
    }
  }
  const waitBoundMs = waitMs === undefined ? defaultWaitMs : checkDurationMs(waitMs, `${call}(): waitMs`, 0);
  return {
    leaseMs:
      leaseMs === undefined
        ? LOCK_DEFAULTS.leaseMs
        : checkDurationMs(leaseMs, `${call}(): leaseMs`, MIN_LEASE_MS, 'the lease minus its drift allowance must be positive'),
    waitMs: waitBoundMs,
    waits: waitBoundMs !== 0,
    signal: checkSignal(signal, `${call}(): signal`),
    maxLeaseMs: maxLeaseMs === undefined ? LOCK_DEFAULTS.maxLeaseMs : checkDurationMs(maxLeaseMs, `${call}(): maxLeaseMs`),
  };
}

/** @throws IllegalMonitorStateError outside any task */
export function requireTask(objectName: string, call: string): TaskContext {
  const task = currentTask();
  if (task) return task;
  throw new IllegalMonitorStateError(
    `${call}() on "${objectName}" needs a task: run it inside client.task(fn) or withLock(fn), or use acquire() for a handle that works anywhere`,
  );
}

/** `extend(leaseMs)`'s lease: required, checked like every `leaseMs`. */
export function checkLease(leaseMs: unknown, call: string): number {
  const checked = parseLockOptions({ leaseMs }, call).leaseMs;
  if (checked === undefined) throw new InvalidArgumentError(`${call}(): leaseMs is required, got undefined`);
  return checked;
}
