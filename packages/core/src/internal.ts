/**
 * `@org/rlock-core/internal`: what rlock's own packages (the watchdog, Redlock,
 * `@org/rlock`) build on. Internal: it may change in any release;
 * applications use `@org/rlock`.
 */
export { EngineClient } from './client/engine-client.js';
export { COMMON_OPTION_NAMES, readCommonOptions, resolveClientOptions, type ResolvedCommonOptions } from './client/client-options.js';
export { OptionReader } from './checks/option-reader.js';
export { checkDurationMs, describeValue } from './checks/argument-checks.js';
export type { EmbeddedScript, ScriptArg } from './connection/scripts.js';
export { Transport } from './connection/transport.js';
export type { Deployment } from './connection/deployment.js';
export { StandaloneDeployment } from './connection/standalone.js';
export { distinctEndpoints } from './connection/endpoints.js';
export { withinMs } from './connection/bounded-call.js';
export { ClientDirectory, connectionNameOf, HOLDER_LOOKUP_MS } from './connection/client-names.js';
export { driftMs, leaseDeadline, monotonicNow } from './connection/time.js';
export type { AcquireReply } from './engine/acquire.js';
export type { ReleaseReply } from './engine/release.js';
export type { Hold } from './engine/hold.js';
export type { BackgroundWork } from './engine/background-work.js';
export { ChannelHub, type HubSubscription } from './engine/channel-hub.js';
export type { QueueSubscription, WaitQueue } from './engine/wait-queue.js';
export { backoffDelayMs } from './engine/backoff.js';
export { DelayQueue } from './engine/delay-queue.js';
export { gather, type Settled } from './engine/gather.js';
export type { LeaseRenewer, LeaseRenewerFactory, LostReason, RenewableHold, RenewalBackend, RenewalReporter, RenewOutcome } from './engine/renewal.js';
export type { LockRequest } from './objects/lock-options.js';
export { checkName, fenceKey, objectKey } from './objects/names.js';
export { keysOfLock, lockKeys, plainLockKeys, type PlainLockKeys, type LockKeys } from './objects/lock/keys.js';
export { readValueAndPttl } from './objects/lock/read-lease.js';
export { formatHoldRecord, parseHoldRecord, type HoldRecord } from './objects/lock/hold-record.js';
export { ReentrantLock } from './objects/lock/reentrant-lock.js';
export type { LockStore, OwnerHoldRead } from './objects/lock/lock-store.js';
export { SCRIPTS } from './objects/scripts.generated.js';
export { KINDS } from './objects/kinds.js';
export { loadOtelApi } from './observability/otel-api.js';
