/**
 * `@org/rlock-redlock`: the reentrant lock across N independent Redis masters
 * (Redlock), composed from core's scripts and kept alive by the watchdog.
 * Most users import `createRedlock` from `@org/rlock`.
 */
export { createRedlock } from './create-redlock.js';
export type { RedlockOptions } from './create-redlock.js';
export { RedlockClient } from './redlock-client.js';
export { REDLOCK_DEFAULTS } from './redlock-options.js';
export type { RedlockClientOptions, RedlockRetryOptions } from './redlock-options.js';
export { RedlockRenewal } from './redlock-renewal.js';
export { quorumOf } from './quorum.js';
