import {
  checkDurationMs,
  checkKnownKeys,
  checkOptionsObject,
  checkSignal,
} from './argument-checks.js';
import { IllegalMonitorStateError, InvalidArgumentError } from './errors.js';
import { currentTask, type TaskContext } from './task-context.js';

/** The checked options of one waiting call (`lock`, `tryLock`, `acquire`, `withLock`). */
export interface LockRequest {
  /** Fixed lease in ms; undefined: a watchdog lease. */
  readonly leaseMs: number | undefined;
  /** How long to wait in ms; undefined: without limit (0: try once). */
  readonly waitMs: number | undefined;
  readonly signal: AbortSignal | undefined;
}

/** Shortest lease accepted: lease − drift (lease × 1 % + 2 ms) must stay positive. */
export const MIN_LEASE_MS = 3;

const OPTION_NAMES = ['leaseMs', 'waitMs', 'signal'] as const;

/**
 * Checks the options of a waiting call before anything is sent.
 * @throws InvalidArgumentError naming the call and the option
 */
export function parseLockOptions(options: unknown, call: string): LockRequest {
  const raw = checkOptionsObject(options, `${call}() options`);
  checkKnownKeys(raw, OPTION_NAMES, `${call}() options`);
  const leaseMs = raw.leaseMs === undefined ? undefined : checkDurationMs(raw.leaseMs, `${call}(): leaseMs`);
  if (leaseMs !== undefined && leaseMs < MIN_LEASE_MS) {
    // lease − drift (1 % + 2 ms) must be positive, or every grant is already late.
    throw new InvalidArgumentError(
      `${call}(): leaseMs must be at least ${MIN_LEASE_MS} ms (the lease minus its drift allowance must be positive), got ${leaseMs}`,
    );
  }
  return {
    leaseMs,
    waitMs: raw.waitMs === undefined ? undefined : checkDurationMs(raw.waitMs, `${call}(): waitMs`, 0),
    signal: checkSignal(raw.signal, `${call}(): signal`),
  };
}

/**
 * The caller's task, for the Java-style calls that need one.
 * @throws IllegalMonitorStateError outside any task, naming task, withLock and acquire
 */
export function requireTask(lockName: string, call: string): TaskContext {
  const task = currentTask();
  if (!task) {
    throw new IllegalMonitorStateError(
      `${call}() on lock "${lockName}" needs a task: run it inside client.task(fn) or lock.withLock(fn), ` +
        'or use lock.acquire() for a handle that works anywhere',
    );
  }
  return task;
}

/** The owner id of `task` on the client `clientId`: `<clientId>:<taskId>`. */
export function ownerId(clientId: string, task: TaskContext): string {
  return `${clientId}:${task.taskId}`;
}
