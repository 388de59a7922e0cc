/**
 * `@org/rlock`: Redisson-style distributed locks for Node.js on Redis.
 * What users install: `createClient` wires the core lock and the watchdog;
 * `createRedlock` does the same across N independent masters (Redlock).
 *
 * @module @org/rlock
 */
export { createClient } from './create-client.js';
export type { ClientOptions } from './create-client.js';
export { createRedlock } from './create-redlock.js';
export type { RedlockOptions } from './create-redlock.js';
export { RedlockClient, REDLOCK_DEFAULTS, QuorumError } from '@org/rlock-redlock';
export type { RedlockClientOptions, RedlockRetryOptions, MasterVote } from '@org/rlock-redlock';
export {
  RLockClient,
  RLockError,
  InvalidArgumentError,
  IllegalMonitorStateError,
  LockLostError,
  LockAcquireTimeoutError,
  RedisUnavailableError,
  RedisCommandError,
  ClientClosedError,
  CLIENT_DEFAULTS,
  LOCK_DEFAULTS,
  MIN_LEASE_MS,
  MAX_NAME_BYTES,
  LAYOUT_VERSION,
  MultiLock,
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
  LockReleasedEvent,
  LockLostEvent,
  HoldLeakedEvent,
  LockRenewedEvent,
  LockLostReason,
  TimeoutHolder,
  ClientIdentity,
  RLockErrorCode,
  CloseReport,
  TaskMiddleware,
  TaskResponse,
  TaskContext,
  RedisInput,
  CommonClientOptions,
  RLockClientOptions,
  RReadWriteLock,
  MultiLockHandle,
  MultiLockScope,
} from '@org/rlock-core';
export { MAX_COUNT } from '@org/rlock-core';
export type { RSemaphore, RPermitExpirableSemaphore, PermitHandle, PermitOptions, RCountDownLatch, WaitOptions } from '@org/rlock-core';
export { WATCHDOG_DEFAULTS } from '@org/rlock-watchdog';
export type { WatchdogOptions } from '@org/rlock-watchdog';
export type { LockChannelContext, LeaseLostMessage, RenewalMessage } from '@org/rlock-core';
export { LeaderElection, INSPECT_DEFAULTS, MAX_INSPECT_LIMIT, OBJECT_KINDS, CLOSE_ON_SIGNALS_DEFAULTS } from '@org/rlock-core';
export type {
  ElectOptions,
  LeadOptions,
  LeadershipScope,
  Leadership,
  LeaderInfo,
  LeadershipEvent,
  LeadershipLostEvent,
  LeaderElectionEvents,
  ObjectKind,
  ObjectInfo,
  ObjectInfoBase,
  HolderInfo,
  WaiterInfo,
  LockInfo,
  FairLockInfo,
  ReadWriteLockInfo,
  SemaphoreInfo,
  PermitExpirableSemaphoreInfo,
  CountDownLatchInfo,
  NonReentrantLockInfo,
  SemaphoreOrLatchInfo,
  UnknownObjectInfo,
  InspectOptions,
  ListOptions,
  CloseOnSignalsOptions,
} from '@org/rlock-core';
