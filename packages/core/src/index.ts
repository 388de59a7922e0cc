export { RLockClient } from './rlock-client.js';
export { LockClientBase } from './lock-client-base.js';
export type { CloseReport } from './lock-client-base.js';
export type { RLockClientOptions } from './client-options.js';
export { CLIENT_DEFAULTS } from './client-options.js';
export type {
  RLockClientEvents,
  HoldEvent,
  LockAcquiredEvent,
  LockLostEvent,
  LockRenewedEvent,
} from './client-events.js';
export type { RLock, LockHandle, LockOptions, LockScope } from './lock-types.js';
export {
  RLockError,
  InvalidArgumentError,
  IllegalMonitorStateError,
  LockLostError,
  LockAcquireTimeoutError,
  QuorumError,
  RedisUnavailableError,
  RedisCommandError,
  ClientClosedError,
} from './errors.js';
export type { RLockErrorCode, LockLostReason, MasterVote } from './errors.js';
export type {
  LeaseRenewer,
  LeaseRenewerFactory,
  RenewableHold,
  RenewalBackend,
  RenewalReporter,
  RenewOutcome,
  LostReason,
} from './lease-renewal.js';
export type { RedisInput, ResolvedConnection } from './redis-connection.js';
export { resolveConnection } from './redis-connection.js';
export { taskMiddleware } from './task-middleware.js';
export type { TaskMiddleware } from './task-middleware.js';
export { currentTask, runInNewTask, runInTask, runInTaskOrNew, newTaskContext } from './task-context.js';
export type { TaskContext } from './task-context.js';
export { lockKeys, checkLockName, checkKeyPrefix, MAX_NAME_BYTES } from './lock-keys.js';
export type { LockKeys } from './lock-keys.js';
export { LAYOUT_VERSION, LockCommands } from './lock-commands.js';
export type { AcquireReply, ReleaseReply, ReleaseRequest, RenewItem } from './lock-commands.js';
export type { LockBackend } from './lock-backend.js';
export { driftMs, leaseDeadline, monotonicNow } from './lease-deadline.js';
export {
  checkDurationMs,
  checkSignal,
  checkOptionsObject,
  checkKnownKeys,
  checkFunction,
  describe as describeValue,
} from './argument-checks.js';
export { parseLockOptions, requireTask, ownerId, MIN_LEASE_MS } from './lock-request.js';
export type { LockRequest } from './lock-request.js';
export { ReentrantLockHandle } from './lock-handle.js';
export type { HandleHold } from './lock-handle.js';
export { HoldRegistry } from './hold-registry.js';
export type { RegisteredHold } from './hold-registry.js';
export { ReentrantLockBase } from './reentrant-lock-base.js';
export type { LockHoldView, AcquireRequest, LockOwnerContext } from './reentrant-lock-base.js';
export { openSubscriberConnection } from './subscriber-connection.js';
export type { SubscriberHandlers } from './subscriber-connection.js';
