/**
 * `@org/rlock-redlock`: the reentrant lock across N independent Redis masters
 * (Redlock), on core's engine. Most users call `createRedlock` of
 * `@org/rlock`, which wires the watchdog in.
 *
 * @module @org/rlock-redlock
 */
export { RedlockClient } from './redlock-client.js';
export { REDLOCK_DEFAULTS, resolveRedlockOptions } from './options.js';
export type { RedlockClientOptions, RedlockRetryOptions } from './options.js';
export { QuorumError } from './errors.js';
export type { MasterVote } from './errors.js';
