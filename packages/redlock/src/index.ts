/**
 * `@org/rlock-redlock`: the reentrant lock across N independent Redis masters
 * (Redlock), on core's engine and kept alive by the watchdog. Most users
 * import `createRedlock` from `@org/rlock`.
 */
export { createRedlock } from './create-redlock.js';
export type { RedlockOptions } from './create-redlock.js';
export { RedlockClient } from './redlock-client.js';
export { REDLOCK_DEFAULTS } from './options.js';
export type { RedlockClientOptions, RedlockRetryOptions } from './options.js';
export { QuorumError } from './errors.js';
export type { MasterVote } from './errors.js';
