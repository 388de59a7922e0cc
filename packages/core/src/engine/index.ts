/**
 * `@org/rlock-core/engine`: what the watchdog, Redlock and later objects build
 * on. Internal: it follows rlock's own packages and may change in any release;
 * applications use `@org/rlock`.
 */
export { EngineClient } from './engine-client.js';
export { EngineContext } from './engine-context.js';
export { acquireOrWait, attempt, recordGrant } from './acquire.js';
export type { AcquireReply, AttemptSpec, TryOutcome, WaitSpec } from './acquire.js';
export { releaseHold } from './release.js';
export type { ReleaseReply, ReleaseSpec } from './release.js';
export { Hold } from './hold.js';
export type { HoldObserver, HoldState, HoldTarget } from './hold.js';
export { HoldRegistry } from './hold-registry.js';
export { HoldKinds, MAX_RENEW_BATCH } from './hold-kinds.js';
export type { HoldKind } from './hold-kinds.js';
export { OwnerChains } from './owner-chains.js';
export { BackgroundWork } from './background-work.js';
export type { RetryPlan } from './background-work.js';
export { HoldHandle } from './handle.js';
export { ChannelHub } from './channel-hub.js';
export type { HubSubscription } from './channel-hub.js';
export { WaitQueue, WaitQueues, Waiter } from './wait-queue.js';
export type { JoinSpec, QueueSubscription, WakeReason } from './wait-queue.js';
export type { EmbeddedScript } from './scripts.js';
export { Transport } from './transport.js';
export { backoffDelayMs } from './backoff.js';
export { boundedCall, toRLockError, withinMs } from './bounded-call.js';
export { gather } from './gather.js';
export type { Gathered, GatherTimeout, Settled } from './gather.js';
export { DEFAULT_DRIFT_FACTOR, driftMs, leaseDeadline, monotonicNow } from './time.js';
export type {
  LeaseRenewer,
  LeaseRenewerFactory,
  LostReason,
  RenewableHold,
  RenewalBackend,
  RenewalReporter,
  RenewOutcome,
} from './renewal.js';
export type { Deployment, SubscriberConnection, SubscriberHandlers } from '../deployment/deployment.js';
export { StandaloneDeployment } from '../deployment/standalone.js';
export { connectionEndpoint, distinctEndpoints, resolveConnection } from '../deployment/connection.js';
export type { ConnectionEndpoint, ResolvedConnection } from '../deployment/connection.js';
export { OptionReader } from '../options/option-reader.js';
export { COMMON_OPTION_NAMES, readCommonOptions, resolveClientOptions } from '../options/client-options.js';
export type { ResolvedClientOptions, ResolvedCommonOptions } from '../options/client-options.js';
export { checkDurationMs, checkFunction, checkKnownKeys, checkOptionsObject, checkSignal, describeValue } from '../options/argument-checks.js';
export { parseLockOptions, requireTask } from '../options/lock-options.js';
export type { LockRequest } from '../options/lock-options.js';
export { currentTask, newTaskContext, ownerId, runInNewTask, runInTask, runInTaskOrNew } from '../tasks/task-context.js';
export { checkKeyPrefix, checkName, fenceKey, objectKey } from '../objects/names.js';
export { lockKeys } from '../objects/lock/keys.js';
export type { LockKeys } from '../objects/lock/keys.js';
export { ReentrantLock } from '../objects/lock/reentrant-lock.js';
export type { LockStore, OwnerHoldRead } from '../objects/lock/lock-store.js';
export { LOCK_KIND, ServerLockStore, keysOfHold } from '../objects/lock/server-lock-store.js';
export { LeaseLockStore } from '../objects/lease-lock/lease-lock-store.js';
export { leaseLockKeys } from '../objects/lease-lock/keys.js';
export { SCRIPTS } from '../objects/scripts.generated.js';
export { Inspector, escapeGlob } from '../ops/inspector.js';
