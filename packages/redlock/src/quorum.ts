/**
 * The arithmetic of Redlock, free of I/O so it can be tested on its own.
 * N masters, quorum Q = ⌊N/2⌋ + 1: two majorities always share a master, and
 * a master grants the lock to one owner at a time, so two owners never both
 * hold a majority (as long as no master forgets a grant: see the README).
 */
import { driftMs } from '@org/rlock-core/engine';

/** Votes needed: a strict majority, ⌊N/2⌋ + 1. */
export function quorumOf(masterCount: number): number {
  return Math.floor(masterCount / 2) + 1;
}

/** Masters that may fail or time out while a majority is still possible: N − Q. */
export function toleratedFailures(masterCount: number): number {
  return masterCount - quorumOf(masterCount);
}

/**
 * What is left of a lease taken `elapsedMs` after the requests went out:
 * lease − elapsed − drift (core's drift: lease × driftFactor + 2 ms). The hold
 * is acquired only if this is positive.
 */
export function validityMs(leaseMs: number, elapsedMs: number, driftFactor: number): number {
  return leaseMs - elapsedMs - driftMs(leaseMs, driftFactor);
}

/** How one round of acquire scripts went, counted over all masters. */
export interface AcquireTally {
  readonly granted: number;
  readonly refused: number;
  readonly failed: number;
}

export type AcquireVerdict =
  /** A majority granted in time. */
  | 'acquired'
  /** More than N − Q masters failed or timed out: no majority was possible. */
  | 'no-quorum'
  /** Others hold it, votes split, or the majority came too late. */
  | 'not-acquired';

/**
 * The rule of one round: acquired iff at least Q masters granted it and the
 * validity left is positive; a QuorumError iff more than N − Q failed.
 */
export function decideAcquire(tally: AcquireTally, masterCount: number, validity: number): AcquireVerdict {
  if (tally.failed > toleratedFailures(masterCount)) return 'no-quorum';
  if (tally.granted >= quorumOf(masterCount) && validity > 0) return 'acquired';
  return 'not-acquired';
}

/**
 * Whether a lost round lost to one owner holding a majority (`held`: wait for
 * its release) or to a split vote or a late majority (`split`: nobody won, so
 * every contender retries after a random delay, or they would collide again).
 * `refusedBy` lists the owner of the lock on each master that refused (or
 * undefined when unknown).
 */
export function classifyLoss(refusedBy: readonly (string | undefined)[], masterCount: number): 'held' | 'split' {
  return Math.max(0, ...countOwners(refusedBy).values()) >= quorumOf(masterCount) ? 'held' : 'split';
}

/**
 * After a split vote, whether this contender got strictly more grants than any
 * other owner did (as far as it saw). The leader of a split retries at once
 * while the others back off for a random time, so the next round most likely
 * goes to one of them instead of splitting again. Views can disagree, so a
 * leader skips the delay only once per streak of collisions.
 */
export function leadsSplit(granted: number, refusedBy: readonly (string | undefined)[]): boolean {
  return granted > 0 && [...countOwners(refusedBy).values()].every((count) => count < granted);
}

/**
 * How many of the masters that refused must announce a release (or expire)
 * before a majority can be free again: Q − (masters that granted and were
 * released again), at least 1.
 */
export function releasesNeeded(granted: number, masterCount: number): number {
  return Math.max(1, quorumOf(masterCount) - granted);
}

/**
 * How long until enough refused keys expire on their own for a majority to be
 * possible: the `needed`-th smallest TTL among the refusals (a TTL of −1, no
 * expiry, counts as never). Infinity when fewer refusals than needed.
 */
export function expiryWaitMs(refusedTtlsMs: readonly number[], needed: number): number {
  const sorted = refusedTtlsMs.map((ttl) => (ttl < 0 ? Number.POSITIVE_INFINITY : ttl)).sort((a, b) => a - b);
  return sorted[needed - 1] ?? Number.POSITIVE_INFINITY;
}

/**
 * The Q-th largest of some PTTLs: how long a majority of them still has the
 * lock. PTTL conventions: −2 when free (key missing), −1 without expiry (ranks
 * above every TTL).
 */
export function quorumPttl(pttls: readonly number[], quorum: number): number {
  const rank = (pttl: number): number => (pttl === -1 ? Number.POSITIVE_INFINITY : pttl < 0 ? -2 : pttl);
  const sorted = pttls.map(rank).sort((a, b) => b - a);
  const value = sorted[quorum - 1];
  if (value === undefined) return -2;
  return value === Number.POSITIVE_INFINITY ? -1 : value;
}

/** What one master answered to a read of the lock: who holds it there (undefined: free) and its PTTL. */
export interface LeaseRead {
  readonly owner: string | undefined;
  readonly pttlMs: number;
}

/**
 * Whether one owner holds the lock on a majority. Counted per owner: partial
 * grants of different owners (a split vote) on a majority of the masters are
 * not a lock. `true` as soon as one owner shows on Q masters; `false` once no
 * owner can reach Q even if every master not known yet (`unknown`: no answer
 * yet, or failed) had it; undefined while the answers so far leave it open.
 */
export function decideLocked(owners: readonly (string | undefined)[], unknown: number, masterCount: number): boolean | undefined {
  const most = Math.max(0, ...countOwners(owners).values());
  if (most >= quorumOf(masterCount)) return true;
  return most + unknown < quorumOf(masterCount) ? false : undefined;
}

/**
 * The lock's remaining lease as Redlock sees it: for the owner that holds it
 * on at least Q masters, the Q-th largest PTTL among that owner's keys (how
 * long a majority still has *its* hold); −2 when no owner holds a majority,
 * −1 when a majority of its keys have no TTL. Keys of other owners never count.
 */
export function quorumOwnerPttl(reads: readonly LeaseRead[], quorum: number): number {
  for (const [owner, count] of countOwners(reads.map((read) => read.owner))) {
    if (count < quorum) continue;
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

/** A renewal's count on the masters where the hold has a grant. */
export interface RenewTally {
  /** Masters where the hold had a grant (its token). */
  readonly holding: number;
  readonly renewed: number;
  readonly gone: number;
  readonly taken: number;
  readonly failed: number;
  /** Masters not answered yet. */
  readonly pending: number;
}

export type RenewVerdict = 'renewed' | 'gone' | 'taken' | 'undecided' | 'pending';

/**
 * A renewal keeps the hold iff a majority of all N masters renewed it; it is
 * lost for good iff so many of the masters holding it answered gone or taken
 * that fewer than Q can still have it (`taken` if any master showed another
 * owner). Otherwise it is `pending` while masters have not answered, then
 * `undecided` (failures hide the answer: retried until the hold's deadline).
 */
export function decideRenewal(tally: RenewTally, masterCount: number): RenewVerdict {
  const quorum = quorumOf(masterCount);
  if (tally.renewed >= quorum) return 'renewed';
  if (tally.holding - tally.gone - tally.taken < quorum) return tally.taken > 0 ? 'taken' : 'gone';
  return tally.pending > 0 ? 'pending' : 'undecided';
}
