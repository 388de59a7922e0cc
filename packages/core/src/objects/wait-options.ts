import { checkDurationMs, checkKnownKeys, checkOptionsObject, checkSignal } from '../checks/argument-checks.js';
import type { LockRequest } from './lock-options.js';

/** Options of a waiting call that takes no lease: a semaphore's `acquire`/`tryAcquire`, a latch's `await`. */
export interface WaitOptions {
  /**
   * How long to wait in ms (0: try once); then `acquire()` rejects with LockAcquireTimeoutError, `tryAcquire()` and `await()` resolve false.
   * @default undefined (without limit); `tryAcquire()`: 0
   */
  readonly waitMs?: number;
  /** Aborts the wait; the call rejects with `signal.reason`. @default undefined */
  readonly signal?: AbortSignal;
}

export type WaitRequest = Pick<LockRequest, 'waitMs' | 'signal'>;

const OPTION_NAMES = ['waitMs', 'signal'] as const;

/** @throws InvalidArgumentError naming the call and the option (`leaseMs` is unknown here) */
export function parseWaitOptions(options: unknown, call: string): WaitRequest {
  const raw = checkOptionsObject(options, `${call}() options`);
  checkKnownKeys(raw, OPTION_NAMES, `${call}() options`);
  return {
    waitMs: raw.waitMs === undefined ? undefined : checkDurationMs(raw.waitMs, `${call}(): waitMs`, 0),
    signal: checkSignal(raw.signal, `${call}(): signal`),
  };
}
