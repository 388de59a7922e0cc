export { RedisFleet } from './redis-fleet.js';
export type { RedisFleetOptions, RedisFleetBackend, RedisAppendFsync } from './fleet-options.js';
export type { KillSignal } from './fleet-server.js';
