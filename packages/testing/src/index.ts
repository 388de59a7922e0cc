export { RedisFleet } from './redis-fleet.js';
export type { RedisFleetOptions, RedisFleetBackend, RedisAppendFsync } from './fleet-options.js';
export type { KillSignal } from './fleet-server.js';
export { uniquePrefix, eventually, sleep, tick, OverlapProbe, commandCalls, commandsProcessed } from './test-helpers.js';
