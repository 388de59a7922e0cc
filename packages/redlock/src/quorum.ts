/**
 * The arithmetic of Redlock, free of I/O so it can be tested on its own.
 * N masters, quorum Q = ⌊N/2⌋ + 1: two majorities always share a master, and
 * a master grants the lock to one owner at a time, so two owners never both
 * hold a majority, as long as no master forgets a grant (hence the quarantine).
 */
import { driftMs } from '@org/rlock-core/internal';

/** Votes needed: a strict majority, ⌊N/2⌋ + 1. */
export function quorumOf(masterCount: number): number {
  return Math.floor(masterCount / 2) + 1;
}

/** Masters that may fail or time out while a majority is still possible: N − Q. */
export function toleratedFailures(masterCount: number): number {
  return masterCount - quorumOf(masterCount);
}

/** What is left of a lease taken `elapsedMs` after the requests went out: lease − elapsed − drift (core's drift). Acquired only if positive. */
export function validityMs(leaseMs: number, elapsedMs: number, driftFactor: number): number {
  return leaseMs - elapsedMs - driftMs(leaseMs, driftFactor);
}

/** Masters whose runs started within this of each other started together (uptimes are whole seconds). */
export const STARTED_TOGETHER_MS = 2_000;

/**
 * Until when (monotonic ms) each master sits out after a restart, 0 when it
 * votes. Restarted without persistence, a master forgot grants that may last
 * the longest lease: it sits out `quarantineMs` from its start when this
 * client saw its run change, when another master started `togetherMs` or more
 * before it, or while some master's run is unknown (it may be older). Masters
 * started together vote at once.
 */
export function quarantineEnds(runs: readonly ({ startedAt: number; restarted: boolean } | undefined)[], quarantineMs: number, togetherMs: number): number[] {
  const earliest = runs.includes(undefined) ? Number.NEGATIVE_INFINITY : Math.min(...runs.map((run) => (run as { startedAt: number }).startedAt));
  return runs.map((run) => (run && (run.restarted || earliest <= run.startedAt - togetherMs) ? run.startedAt + quarantineMs : 0));
}

/**
 * The masters whose run is known (a run id; undefined for the others, left
 * out) in the order a round on `key` asks them: rendezvous hashing of the key
 * over their run ids, so every client ranks them alike. The first voting one
 * is the gate of a contended lock (contenders meet there instead of splitting
 * the votes); the first Q are the majority an uncontended round asks before
 * the others.
 */
export function rankOf(runIds: readonly (string | undefined)[], key: string): number[] {
  const scored: [number, number][] = [];
  runIds.forEach((runId, index) => {
    if (runId === undefined) return;
    let hash = 0x811c9dc5; // FNV-1a
    for (const text of [runId, key]) for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
    scored.push([hash >>> 0, index]);
  });
  return scored.sort((a, b) => b[0] - a[0]).map(([, index]) => index);
}

/** How one round of acquire scripts went, counted over all masters. */
export type AcquireTally = { readonly granted: number; readonly refused: number; readonly failed: number };

/** acquired: a majority granted in time; no-quorum: more than N − Q failed; not-acquired: others hold it, votes split, or too late. */
export type AcquireVerdict = 'acquired' | 'no-quorum' | 'not-acquired';

/** The rule of one round: acquired iff ≥ Q granted with validity left; no quorum iff more than N − Q failed. */
export function decideAcquire(tally: AcquireTally, masterCount: number, validity: number): AcquireVerdict {
  if (tally.failed > toleratedFailures(masterCount)) return 'no-quorum';
  return tally.granted >= quorumOf(masterCount) && validity > 0 ? 'acquired' : 'not-acquired';
}

/** Whether a lost round lost to one owner holding a majority (`held`: wait for its release) or nobody won (`split`). `refusedBy`: the holder on each refusing master. */
export function classifyLoss(refusedBy: readonly (string | undefined)[], masterCount: number): 'held' | 'split' {
  return Math.max(0, ...countOwners(refusedBy).values()) >= quorumOf(masterCount) ? 'held' : 'split';
}

/** How many refusing masters must announce a release before a majority can be free: Q − the masters that granted (and were released), at least 1. */
export function releasesNeeded(granted: number, masterCount: number): number {
  return Math.max(1, quorumOf(masterCount) - granted);
}

/** How long until `needed` refused keys expire on their own: the needed-th smallest TTL (−1, no TTL: never); Infinity if too few. */
export function expiryWaitMs(refusedTtlsMs: readonly number[], needed: number): number {
  const sorted = refusedTtlsMs.map((ttl) => (ttl < 0 ? Number.POSITIVE_INFINITY : ttl)).sort((a, b) => a - b);
  return sorted[needed - 1] ?? Number.POSITIVE_INFINITY;
}

/** The Q-th largest PTTL: how long a majority still has the lock (−2: free; −1, no TTL, ranks above every TTL). */
export function quorumPttl(pttls: readonly number[], quorum: number): number {
  const sorted = pttls.map((pttl) => (pttl === -1 ? Number.POSITIVE_INFINITY : pttl < 0 ? -2 : pttl)).sort((a, b) => b - a);
  const value = sorted[quorum - 1] ?? -2;
  return value === Number.POSITIVE_INFINITY ? -1 : value;
}

/** What one master answered to a read of the lock: who holds it there (undefined: free) and its PTTL. */
export type LeaseRead = { readonly owner: string | undefined; readonly pttlMs: number };

/**
 * Whether one owner holds the lock on a majority, counted per owner (partial
 * grants of different owners are not a lock): true once one owner shows on Q
 * masters, false once none can reach Q even with every master not known yet
 * (`unknown`), undefined while that is open.
 */
export function decideLocked(owners: readonly (string | undefined)[], unknown: number, masterCount: number): boolean | undefined {
  const most = Math.max(0, ...countOwners(owners).values());
  if (most >= quorumOf(masterCount)) return true;
  return most + unknown < quorumOf(masterCount) ? false : undefined;
}

/** For the owner holding a majority, the Q-th largest PTTL among its keys (how long a majority still has its hold); −2 when no owner does. */
export function quorumOwnerPttl(reads: readonly LeaseRead[], quorum: number): number {
  for (const [owner, count] of countOwners(reads.map((read) => read.owner))) {
    if (count >= quorum)
      return quorumPttl(
        reads.filter((read) => read.owner === owner).map((read) => read.pttlMs),
        quorum,
      );
  }
  return -2;
}

function countOwners(owners: readonly (string | undefined)[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const owner of owners) if (owner !== undefined) counts.set(owner, (counts.get(owner) ?? 0) + 1);
  return counts;
}

/** A renewal's count over the masters where the hold has a grant (`holding`); `pending`: not answered yet. */
export type RenewTally = Readonly<Record<'holding' | 'renewed' | 'gone' | 'taken' | 'failed' | 'pending', number>>;

export type RenewVerdict = 'renewed' | 'gone' | 'taken' | 'undecided' | 'pending';

/**
 * Renewed iff a majority of all N masters renewed it; lost for good iff fewer
 * than Q of those holding it can still have it (`taken` if one showed another
 * owner); otherwise `pending` while answers are out, then `undecided`.
 */
export function decideRenewal(tally: RenewTally, masterCount: number): RenewVerdict {
  const quorum = quorumOf(masterCount);
  if (tally.renewed >= quorum) return 'renewed';
  if (tally.holding - tally.gone - tally.taken < quorum) return tally.taken > 0 ? 'taken' : 'gone';
  return tally.pending > 0 ? 'pending' : 'undecided';
}
