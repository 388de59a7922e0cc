import { nanoid } from 'nanoid';
import { QuorumError, monotonicNow, type LockKeys, type MasterVote, type ReleaseReply } from '@org/rlock-core';
import { gather, type Settled } from './gather.js';
import { wasNotSent, type Master } from './master.js';
import {
  decideAcquire,
  decideRenewal,
  quorumOf,
  quorumPttl,
  toleratedFailures,
  validityMs,
  type AcquireTally,
  type AcquireVerdict,
  type RenewVerdict,
} from './quorum.js';
import type { RedlockHold } from './redlock-hold.js';

/** One master's answer to the acquire of a round. */
export interface AcquireVote {
  readonly master: Master;
  readonly kind: 'granted' | 'refused' | 'failed';
  /** The token this master gave (granted). */
  readonly token?: string;
  /** Remaining TTL of the lock on this master (refused; −1: no TTL). */
  readonly ttlMs?: number;
  /** Who holds it on this master (refused; when the round asked). */
  readonly holder?: string;
  readonly error?: Error;
}

/** One round: the acquire script on every master at once. */
export interface Round {
  /** Operation id of every acquire of the round (the scripts' replay guard, and the key to cancel them). */
  readonly op: string;
  /** Monotonic time taken before the first request went out. */
  readonly sentAt: number;
  readonly votes: readonly AcquireVote[];
  readonly tally: AcquireTally;
  readonly validityMs: number;
  readonly verdict: AcquireVerdict;
}

/** What a renewal (or lease extension) of one hold found. */
export interface RenewResult {
  readonly verdict: Exclude<RenewVerdict, 'pending'>;
  readonly votes: readonly MasterVote[];
}

/** What the final release of a hold found. */
export type ReleaseResult =
  | { readonly outcome: 'released' }
  | { readonly outcome: 'lost'; readonly reason: 'taken' | 'expired' }
  | { readonly outcome: 'undecided'; readonly error: QuorumError };

/**
 * The N independent masters and the quorum rule applied to every script call:
 * each call goes to every master in parallel, bounded per master, and the
 * answer is decided as soon as the replies so far settle it.
 */
export class MasterSet {
  readonly quorum: number;

  constructor(
    readonly masters: readonly Master[],
    private readonly driftFactor: number,
    private readonly onError: (error: Error) => void,
  ) {
    this.quorum = quorumOf(masters.length);
  }

  get size(): number {
    return this.masters.length;
  }

  /**
   * Settles once every master's first connection attempt has: calls bounded by
   * the per-node timeout must not count a master as failed only because its
   * connection is still being set up.
   */
  ready(): Promise<unknown> {
    return Promise.all(this.masters.map((master) => master.firstConnect));
  }

  // ---- acquire -----------------------------------------------------------

  /**
   * Runs the acquire script on every master at once, each bounded by the
   * per-node timeout, and applies the rule: acquired iff ≥ Q granted and
   * lease − elapsed − drift > 0, elapsed measured from before the sends. With
   * `withHolders`, each master is also asked who holds the lock (sent right
   * behind the acquire on the same connection: no extra round trip), so a lost
   * round can tell a majority holder from a split vote.
   */
  async acquireRound(keys: LockKeys, owner: string, leaseMs: number, withHolders: boolean): Promise<Round> {
    await this.ready();
    const op = nanoid();
    const sentAt = monotonicNow();
    const votes = await Promise.all(
      this.masters.map(async (master): Promise<AcquireVote> => {
        // Sent right behind the acquire on the same connection: no extra round trip.
        const acquire = master.quick('acquire', keys.lock, (commands) => commands.acquire(keys, owner, leaseMs, op));
        const holder = withHolders
          ? master.quick('a read', keys.lock, (commands) => commands.readHolder(keys)).then((h) => h?.owner, () => undefined)
          : undefined;
        try {
          const reply = await acquire;
          if (reply.granted) return { master, kind: 'granted', token: reply.token };
          return { master, kind: 'refused', ttlMs: reply.ttlMs, holder: await holder };
        } catch (error) {
          return { master, kind: 'failed', error: error instanceof Error ? error : new Error(String(error)) };
        }
      }),
    );
    const elapsed = monotonicNow() - sentAt;
    const tally: AcquireTally = {
      granted: votes.filter((v) => v.kind === 'granted').length,
      refused: votes.filter((v) => v.kind === 'refused').length,
      failed: votes.filter((v) => v.kind === 'failed').length,
    };
    const validity = validityMs(leaseMs, elapsed, this.driftFactor);
    return { op, sentAt, votes, tally, validityMs: validity, verdict: decideAcquire(tally, this.size, validity) };
  }

  /**
   * Clears what a lost round left: releases the round's grant on every master
   * that granted it or failed to answer (its acquire may still run), by the
   * round's op id, so nothing else of the owner is touched. Resolves once the
   * masters that granted answered (bounded by the per-node timeout), so a
   * caller told "not acquired" finds no key of its own on a live master; the
   * cancels to failed masters go on in the background (one connection runs its
   * commands in order, so a cancel runs after the acquire it cancels).
   */
  async undoRound(keys: LockKeys, owner: string, round: Round): Promise<void> {
    const granted: Promise<unknown>[] = [];
    for (const vote of round.votes) {
      if (vote.kind === 'granted') {
        const cancel = vote.master.quick('a cancel', keys.lock, (commands) =>
          commands.release(keys, { owner, op: nanoid(), ifOp: round.op, all: true }),
        );
        // Its grant stays until its TTL: worth knowing, never thrown.
        granted.push(cancel.catch((error: unknown) => this.onError(asError(error))));
      } else if (vote.kind === 'failed' && !wasNotSent(vote.error)) {
        this.cancel(vote.master, keys, owner, round.op);
      }
    }
    await Promise.all(granted);
  }

  /**
   * After a won round: cancels the grant a failed or late master may still
   * make (in the background), so the hold is exactly on the masters that
   * answered in time.
   */
  cancelStragglers(keys: LockKeys, owner: string, round: Round): void {
    for (const vote of round.votes) {
      if (vote.kind === 'failed' && !wasNotSent(vote.error)) this.cancel(vote.master, keys, owner, round.op);
    }
  }

  /**
   * Cancels the round's acquire on a master that did not answer in time, in the
   * background. Sent even while the connection is down: ioredis may resend the
   * acquire after reconnecting, and the cancel, queued behind it on the same
   * connection, runs after it.
   */
  private cancel(master: Master, keys: LockKeys, owner: string, op: string): void {
    master.commands.release(keys, { owner, op: nanoid(), ifOp: op, all: true }).catch(() => undefined);
  }

  roundError(name: string, round: Round): QuorumError {
    return new QuorumError(
      `lock "${name}": ${round.tally.failed} of ${this.size} masters failed or timed out; a majority (${this.quorum}) was not possible`,
      round.votes.map((vote) => toMasterVote(vote.master, vote.kind === 'granted', vote.error)),
      this.quorum,
    );
  }

  // ---- renew -------------------------------------------------------------

  /**
   * Renews holds on every master where each has a grant: one renew-n call per
   * master for the whole batch, each with `commandTimeoutMs`. Resolves once
   * every hold is decided (see decideRenewal) or every call settled.
   */
  async renew(items: readonly { readonly hold: RedlockHold; readonly leaseMs: number }[]): Promise<RenewResult[]> {
    type Codes = number[] | undefined;
    // positions[m][k] = index in `items` of the k-th item sent to master m
    const positions = this.masters.map((master) =>
      items.flatMap((item, index) => (item.hold.tokens[master.index] !== undefined ? [index] : [])),
    );
    const calls = this.masters.map((master) => async (): Promise<Codes> => {
      const mine = positions[master.index] as number[];
      if (mine.length === 0) return undefined;
      return master.commands.renew(
        mine.map((index) => {
          const { hold, leaseMs } = items[index] as { hold: RedlockHold; leaseMs: number };
          return { key: hold.key, owner: hold.owner, token: hold.tokens[master.index] as string, leaseMs };
        }),
      );
    });
    const verdictOf = (results: readonly (Settled<Codes> | undefined)[], index: number): RenewVerdict => {
      let holding = 0;
      let renewed = 0;
      let gone = 0;
      let taken = 0;
      let failed = 0;
      let pending = 0;
      this.masters.forEach((master) => {
        const k = (positions[master.index] as number[]).indexOf(index);
        if (k === -1) return;
        holding++;
        const result = results[master.index];
        if (result === undefined) pending++;
        else if (!result.ok) failed++;
        else {
          const code = result.value?.[k];
          if (code === 1) renewed++;
          else if (code === 0) gone++;
          else if (code === -1) taken++;
          else failed++;
        }
      });
      return decideRenewal({ holding, renewed, gone, taken, failed, pending }, this.size);
    };
    const gathered = await gather(calls, (results) =>
      items.every((_, index) => verdictOf(results, index) !== 'pending') ? true : undefined,
    );
    return items.map((_, index) => {
      const verdict = verdictOf(gathered.results, index);
      return {
        verdict: verdict === 'pending' ? 'undecided' : verdict,
        votes: this.masters.map((master) => {
          const k = (positions[master.index] as number[]).indexOf(index);
          const result = gathered.results[master.index];
          if (k === -1) return toMasterVote(master, false);
          if (result === undefined) return toMasterVote(master, false, new Error('no answer yet'));
          if (!result.ok) return toMasterVote(master, false, result.error);
          return toMasterVote(master, result.value?.[k] === 1);
        }),
      };
    });
  }

  // ---- release -----------------------------------------------------------

  /**
   * The final release of a hold: the release script on every master (with the
   * master's token where the hold has a grant, so it never deletes a newer
   * hold). Released iff a majority released it; lost iff so many masters
   * holding it answered "not held" that fewer than Q can still have had it;
   * otherwise undecided (failures hide the answer).
   */
  async release(hold: RedlockHold): Promise<ReleaseResult> {
    const holding = hold.holdingMasters;
    // Masters a failed earlier unlock already released count as released.
    const alreadyReleased = hold.releasedOn.size;
    const calls = this.masters.map((master) => (): Promise<ReleaseReply | undefined> => {
      const token = hold.tokens[master.index];
      const request = { owner: hold.owner, op: nanoid(), all: true, ...(token !== undefined ? { token } : {}) };
      const call = master.commands.release(hold.keys, request);
      if (token === undefined) {
        // Not one of the hold's masters: a late grant there was cancelled, so
        // this only sweeps leftovers; its answer does not count.
        call.catch(() => undefined);
        return Promise.resolve(undefined);
      }
      return call;
    });
    const tallyOf = (results: readonly (Settled<ReleaseReply | undefined> | undefined)[]) => {
      let released = alreadyReleased;
      let notHeld = 0;
      let keyExists = false;
      for (const index of holding) {
        const result = results[index];
        if (result === undefined || !result.ok || result.value === undefined) continue;
        if (result.value.released) released++;
        else if (result.value.why === 'not-held') {
          notHeld++;
          keyExists ||= result.value.keyExists;
        }
      }
      return { released, notHeld, keyExists };
    };
    const decide = (results: readonly (Settled<ReleaseReply | undefined> | undefined)[]): ReleaseResult | undefined => {
      const { released, notHeld, keyExists } = tallyOf(results);
      if (released >= this.quorum) return { outcome: 'released' };
      if (alreadyReleased + holding.length - notHeld < this.quorum) return { outcome: 'lost', reason: keyExists ? 'taken' : 'expired' };
      return undefined;
    };
    const gathered = await gather(calls, decide);
    // Whatever was decided, masters that released are done: a retried unlock counts them.
    const record = (results: readonly (Settled<ReleaseReply | undefined> | undefined)[]): void => {
      for (const index of holding) {
        const result = results[index];
        if (result?.ok && result.value?.released) {
          hold.tokens[index] = undefined;
          hold.releasedOn.add(index);
        }
      }
    };
    record(gathered.results);
    void gathered.all.then((all) => {
      record(all);
      for (const index of holding) {
        const result = all[index];
        if (result && !result.ok && gathered.verdict?.outcome === 'released') this.onError(result.error);
      }
    });
    if (gathered.verdict) return gathered.verdict;
    return {
      outcome: 'undecided',
      error: new QuorumError(
        `lock "${hold.name}": the release was confirmed by ${tallyOf(gathered.results).released} of ${this.size} masters, fewer than a majority (${this.quorum}); the others did not answer`,
        this.masters.map((master) => {
          const result = gathered.results[master.index];
          const released = hold.releasedOn.has(master.index);
          return toMasterVote(master, released, result && !result.ok ? result.error : undefined);
        }),
        this.quorum,
      ),
    };
  }

  /** Best-effort removal of what is left of a lost hold on the masters (token-checked): waiters need not sit out its TTL. */
  sweep(hold: RedlockHold): void {
    for (const index of hold.holdingMasters) {
      const master = this.masters[index] as Master;
      const token = hold.tokens[index] as string;
      master.commands.release(hold.keys, { owner: hold.owner, op: nanoid(), all: true, token }).catch(() => undefined);
    }
  }

  /** Releases every acquisition of a hold on close; true if a majority confirmed. */
  async releaseOnClose(hold: RedlockHold): Promise<boolean> {
    const result = await this.release(hold);
    return result.outcome === 'released';
  }

  // ---- reads and admin -----------------------------------------------------

  /** True iff the lock exists on a majority; false iff it is missing on more than N − Q. */
  async isLockedOnMajority(name: string, keys: LockKeys): Promise<boolean> {
    await this.ready();
    const gathered = await gather(
      this.masters.map((master) => () => master.quick('EXISTS', keys.lock, (commands) => commands.exists(keys))),
      (results) => {
        const yes = results.filter((r) => r?.ok && r.value).length;
        const no = results.filter((r) => r?.ok && !r.value).length;
        if (yes >= this.quorum) return true;
        if (no > toleratedFailures(this.size)) return false;
        return undefined;
      },
    );
    if (gathered.verdict !== undefined) return gathered.verdict;
    throw this.readError(name, 'isLocked', gathered.results, (value) => value === true);
  }

  /**
   * Whether `owner` holds the lock on a majority (and its count there); false
   * iff more than N − Q masters show it free or held by someone else.
   */
  async heldOnMajority(name: string, keys: LockKeys, owner: string): Promise<{ held: boolean; count: number }> {
    await this.ready();
    type Holder = { owner: string; count: number } | undefined;
    const gathered = await gather(
      this.masters.map((master) => () => master.quick('a read', keys.lock, (commands) => commands.readHolder(keys))),
      (results: readonly (Settled<Holder> | undefined)[]) => {
        const mine = results.filter((r) => r?.ok && r.value?.owner === owner).length;
        const other = results.filter((r) => r?.ok && r.value?.owner !== owner).length;
        if (mine >= this.quorum) return true;
        if (other > toleratedFailures(this.size)) return false;
        return undefined;
      },
    );
    if (gathered.verdict === undefined) throw this.readError(name, 'a read of the holder', gathered.results, (v) => v?.owner === owner);
    const counts = gathered.results.flatMap((r) => (r?.ok && r.value?.owner === owner ? [r.value.count] : []));
    return { held: gathered.verdict, count: counts.length > 0 ? Math.min(...counts) : 0 };
  }

  /** The Q-th largest PTTL: how long a majority still has the lock (−2 free, −1 no TTL). */
  async quorumTtl(name: string, keys: LockKeys): Promise<number> {
    await this.ready();
    const gathered = await gather(
      this.masters.map((master) => () => master.quick('PTTL', keys.lock, (commands) => commands.pttl(keys))),
      () => undefined,
    );
    const failed = gathered.results.filter((r) => !r?.ok).length;
    if (failed > toleratedFailures(this.size)) throw this.readError(name, 'PTTL', gathered.results, () => true);
    // A master that did not answer counts as free: the answer can only be lower, never an overstated lease.
    return quorumPttl(
      gathered.results.map((r) => (r?.ok ? r.value : -2)),
      this.quorum,
    );
  }

  /** Deletes the lock on every master whoever holds it; true if it released it on any. */
  async forceUnlock(name: string, keys: LockKeys): Promise<boolean> {
    const gathered = await gather(
      this.masters.map((master) => () => master.commands.forceUnlock(keys)),
      () => undefined,
    );
    const released = gathered.results.some((r) => r?.ok && r.value);
    const failures = gathered.results.filter((r) => !r?.ok);
    if (!released && failures.length > toleratedFailures(this.size)) {
      throw this.readError(name, 'forceUnlock', gathered.results, (value) => value === true);
    }
    for (const failure of failures) if (failure && !failure.ok) this.onError(failure.error);
    return released;
  }

  private readError<T>(
    name: string,
    what: string,
    results: readonly (Settled<T> | undefined)[],
    granted: (value: T) => boolean,
  ): QuorumError {
    const failed = results.filter((r) => !r?.ok).length;
    return new QuorumError(
      `lock "${name}": ${what} failed or timed out on ${failed} of ${this.size} masters; no majority (${this.quorum}) answered alike`,
      this.masters.map((master) => {
        const result = results[master.index];
        if (result === undefined) return toMasterVote(master, false, new Error('no answer'));
        return result.ok ? toMasterVote(master, granted(result.value)) : toMasterVote(master, false, result.error);
      }),
      this.quorum,
    );
  }
}

function toMasterVote(master: Master, granted: boolean, error?: Error): MasterVote {
  return error ? { master: master.name, granted, error } : { master: master.name, granted };
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
