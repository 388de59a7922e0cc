import { RLockError } from '@org/rlock-core';

/** One master's answer in a Redlock round. */
export interface MasterVote {
  /** The master as configured (a URL or host:port). */
  readonly master: string;
  /** True when it granted the lock; false when it refused or failed. */
  readonly granted: boolean;
  /** Why it failed, if it did (timeout, connection, script error). */
  readonly error?: Error;
}

/** Too many Redlock masters failed or timed out for a majority to be possible, or to decide. */
export class QuorumError extends RLockError {
  /** The code of every QuorumError (what `instanceof` checks across builds). */
  static readonly code = 'ERR_RLOCK_QUORUM' as const;
  override readonly name = 'QuorumError' as const;
  readonly code = 'ERR_RLOCK_QUORUM' as const;
  constructor(
    message: string,
    /** Every master's vote or error, in the order they were configured. */
    readonly votes: readonly MasterVote[],
    /** Votes a decision needs: ⌊N/2⌋ + 1. */
    readonly quorum: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
