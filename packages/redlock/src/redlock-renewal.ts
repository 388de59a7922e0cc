import {
  QuorumError,
  monotonicNow,
  type RenewableHold,
  type RenewalBackend,
  type RenewOutcome,
} from '@org/rlock-core';
import type { MasterSet } from './master-set.js';
import { redlockDriftMs } from './quorum.js';
import { RedlockHold } from './redlock-hold.js';

/** Holds per renew call on each master, as on a single server. */
export const MAX_RENEW_BATCH = 100;

/**
 * The watchdog's way to the masters (core's renewal seam). A batch of holds is
 * renewed with one renew-n call per master, all masters at once; a hold is
 * `renewed` iff a majority of the N masters renewed it within its validity
 * (lease − elapsed − drift > 0); `gone`/`taken` iff fewer than a majority can
 * still have it (a key deleted or taken on too many masters: the renew script
 * never recreates one). When failures leave a hold undecided the call rejects
 * with a QuorumError: the watchdog retries with backoff, and loses the hold as
 * `unreachable` if its deadline passes first.
 */
export class RedlockRenewal implements RenewalBackend {
  readonly maxBatch = MAX_RENEW_BATCH;

  constructor(
    private readonly masters: MasterSet,
    private readonly driftFactor: number,
  ) {}

  /** Every hold lives on the same masters, so any of them may share a batch. */
  batchKey(): string {
    return 'masters';
  }

  async renew(holds: readonly RenewableHold[]): Promise<RenewOutcome[]> {
    const items = holds.map((hold) => {
      if (!(hold instanceof RedlockHold)) throw new TypeError('RedlockRenewal can only renew Redlock holds');
      return { hold, leaseMs: hold.leaseMs };
    });
    const startedAt = monotonicNow();
    const results = await this.masters.renew(items);
    const elapsed = monotonicNow() - startedAt;
    const outcomes: RenewOutcome[] = [];
    let undecided: { name: string; votes: QuorumError['votes'] } | undefined;
    results.forEach((result, index) => {
      const { hold, leaseMs } = items[index] as { hold: RedlockHold; leaseMs: number };
      if (result.verdict === 'renewed' && leaseMs - elapsed - redlockDriftMs(leaseMs, this.driftFactor) > 0) {
        outcomes.push('renewed');
      } else if (result.verdict === 'gone' || result.verdict === 'taken') {
        outcomes.push(result.verdict);
      } else {
        undecided ??= { name: hold.name, votes: result.votes };
      }
    });
    if (undecided) {
      throw new QuorumError(
        `lock "${undecided.name}": the lease could not be renewed on a majority (${this.masters.quorum} of ${this.masters.size}) within its validity`,
        undecided.votes,
        this.masters.quorum,
      );
    }
    return outcomes;
  }
}
