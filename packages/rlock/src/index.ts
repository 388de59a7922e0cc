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
// Everything core exports, so one import serves every object kind.
export * from '@org/rlock-core';
export { WATCHDOG_DEFAULTS } from '@org/rlock-watchdog';
export type { WatchdogOptions } from '@org/rlock-watchdog';
