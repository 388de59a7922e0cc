/**
 * `@org/rlock-core`: the public API of rlock's core (most users import `@org/rlock`); the watchdog and Redlock build on `@org/rlock-core/internal`.
 * @module @org/rlock-core
 */
export { RLockClient } from './client/rlock-client.js';
export type { CloseReport } from './client/engine-client.js';
export { CLIENT_DEFAULTS, type RLockClientOptions, type CommonClientOptions } from './client/client-options.js';
export { LOCK_DEFAULTS, MIN_LEASE_MS, type LockOptions } from './objects/lock-options.js';
export type {
  RLockClientEvents,
  HoldEvent,
  LockAcquiredEvent,
  LockReleasedEvent,
  LockLostEvent,
  HoldLeakedEvent,
  LockRenewedEvent,
  ClientWarning,
  EvictionPolicyWarning,
} from './client/client-events.js';
export type { RLock, RLockOf, LockHandle, LockHandleOf, LockScope } from './objects/lock/types.js';
export type { RSemaphore } from './objects/semaphore/types.js';
export type { RPermitExpirableSemaphore, PermitHandle, PermitOptions } from './objects/permit-semaphore/types.js';
export type { RCountDownLatch } from './objects/latch/types.js';
export type { WaitOptions } from './objects/wait-options.js';
export { MAX_COUNT } from './checks/count-checks.js';
export { MultiLock, type MultiLockHandle, type MultiLockScope } from './objects/multi-lock/multi-lock.js';
export type { RReadWriteLock } from './objects/rw-lock/read-write-lock.js';
export {
  RLockError,
  InvalidArgumentError,
  IllegalMonitorStateError,
  LockLostError,
  LockAcquireTimeoutError,
  RedisUnavailableError,
  RedisCommandError,
  ClientClosedError,
  type RLockErrorCode,
  type LockLostReason,
  type TimeoutHolder,
} from './errors.js';
export type { ClientIdentity } from './connection/client-names.js';
export type { RedisInput } from './connection/endpoints.js';
export { taskMiddleware, type TaskMiddleware, type TaskResponse } from './tasks/task-middleware.js';
export { currentTask, type TaskContext } from './tasks/task-context.js';
export { MAX_NAME_BYTES } from './objects/names.js';
export { LAYOUT_VERSION } from './objects/scripts.generated.js';
export {
  INSPECT_DEFAULTS,
  MAX_INSPECT_LIMIT,
  OBJECT_KINDS,
  type ObjectKind,
  type ObjectInfo,
  type ObjectInfoBase,
  type HolderInfo,
  type WaiterInfo,
  type SemaphoreOrLatchInfo,
  type UnknownObjectInfo,
  type InspectOptions,
  type ListOptions,
} from './client/inspect-types.js';
export { LeaderElection } from './objects/leader/leader-election.js';
export { CLOSE_ON_SIGNALS_DEFAULTS, type CloseOnSignalsOptions } from './client/close-on-signals.js';
export type { LockChannelContext, LeaseLostMessage, RenewalMessage } from './observability/channels.js';
export type {
  ElectOptions,
  LeadOptions,
  LeadershipScope,
  Leadership,
  LeaderInfo,
  LeadershipEvent,
  LeadershipLostEvent,
  LeaderElectionEvents,
} from './objects/leader/types.js';
export type { LockInfo } from './objects/lock/info.js';
export type { FairLockInfo } from './objects/fair-queue/info.js';
export type { ReadWriteLockInfo } from './objects/rw-lock/info.js';
export type { SemaphoreInfo } from './objects/semaphore/info.js';
export type { PermitExpirableSemaphoreInfo } from './objects/permit-semaphore/info.js';
export type { CountDownLatchInfo } from './objects/latch/info.js';
export type { NonReentrantLockInfo } from './objects/non-reentrant-lock/info.js';
export type { SpinLockInfo } from './objects/spin-lock/info.js';
export { SPIN_LOCK_DEFAULTS, type SpinLockOptions } from './objects/spin-lock/options.js';
export type { NonReentrantFairLockInfo } from './objects/non-reentrant-fair-lock/info.js';
