export { RedisFleet } from './redis-fleet.js';
export type { RedisFleetOptions, RedisFleetBackend, RedisAppendFsync } from './fleet-options.js';
export type { KillSignal } from './fleet-server.js';
export { RedisCluster } from './cluster-fleet.js';
export type { ClusterNode, ClusterWaitOptions } from './cluster-fleet.js';
export type { ClusterRole } from './cluster-nodes.js';
export type { RedisClusterOptions } from './cluster-options.js';
export { keySlot } from './key-slot.js';
export { uniquePrefix, eventually, sleep, tick, OverlapProbe, commandCalls, commandsProcessed } from './test-helpers.js';
