/**
 * `createRedlock`: the reentrant lock across N independent Redis masters, with
 * the watchdog wired in (renewal on every master, kept only on a majority).
 * Implemented in `@org/rlock-redlock`; re-exported here so users install only
 * `@org/rlock`.
 */
export { createRedlock, RedlockClient, REDLOCK_DEFAULTS, QuorumError } from '@org/rlock-redlock';
export type { RedlockOptions, RedlockClientOptions, RedlockRetryOptions, MasterVote } from '@org/rlock-redlock';
