/**
 * `@org/rlock`: Redisson-style distributed locks for Node.js on Redis.
 * What users install: `createClient` wires the core lock and the watchdog;
 * `createRedlock` does the same across N independent masters (Redlock).
 */
export { createClient } from './create-client.js';
export type { ClientOptions } from './create-client.js';
export { createRedlock, RedlockClient, REDLOCK_DEFAULTS } from './create-redlock.js';
export type { RedlockOptions, RedlockClientOptions, RedlockRetryOptions } from './create-redlock.js';
export {
  RLockClient,
  RLockError,
  InvalidArgumentError,
  IllegalMonitorStateError,
  LockLostError,
  LockAcquireTimeoutError,
  QuorumError,
  RedisUnavailableError,
  RedisCommandError,
  ClientClosedError,
  CLIENT_DEFAULTS,
  taskMiddleware,
  currentTask,
} from '@org/rlock-core';
export type {
  RLock,
  LockHandle,
  LockOptions,
  LockScope,
  RLockClientEvents,
  HoldEvent,
  LockAcquiredEvent,
  LockLostEvent,
  LockRenewedEvent,
  LockLostReason,
  MasterVote,
  RLockErrorCode,
  CloseReport,
  TaskMiddleware,
  TaskContext,
  RedisInput,
} from '@org/rlock-core';
export { WATCHDOG_DEFAULTS } from '@org/rlock-watchdog';
export type { WatchdogOptions } from '@org/rlock-watchdog';
