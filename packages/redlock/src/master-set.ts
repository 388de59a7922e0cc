import { setTimeout as sleep } from 'node:timers/promises';
import { nanoid } from 'nanoid';
import {
  QuorumError,
  RedisCommandError,
  RedisUnavailableError,
  monotonicNow,
  type LockKeys,
  type MasterVote,
  type ReleaseReply,
} from '@org/rlock-core';
import { gather, type Settled } from './gather.js';
import { wasNotSent, withinMs, type Master } from './master.js';
import {
  decideAcquire,
  decideLocked,
  decideRenewal,
  quorumOf,
  quorumOwnerPttl,
  toleratedFailures,
  validityMs,
  type AcquireTally,
  type AcquireVerdict,
  type LeaseRead,
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

/**
 * What the final release of a hold found: released on a majority; lost before
 * it (fewer than Q masters still had it); or undecided (failures hide the
 * answer: the hold can no longer be counted on, see {@link MasterSet.release}).
 */
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
  /** Background work still running: cancels, and releases retried until answered. */
  private readonly background = new Set<Promise<void>>();
  /** Aborted on close: background work stops retrying (what was sent still runs). */
  private readonly stopping = new AbortController();

  constructor(
    readonly masters: readonly Master[],
    private readonly driftFactor: number,
    /** Longest wait between two tries of a release in the background, in ms. */
    private readonly commandTimeoutMs: number,
    /** Reports a failure in the background; never throws. */
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
   * `withHolders`, a refusal also names its holder (the acquire script returns
   * it), so a lost round can tell a majority holder from a split vote.
   */
  async acquireRound(keys: LockKeys, owner: string, leaseMs: number, withHolders: boolean): Promise<Round> {
    await this.ready();
    const op = nanoid();
    const sentAt = monotonicNow();
    const votes = await Promise.all(
      this.masters.map(async (master): Promise<AcquireVote> => {
        const acquire = master.quick('acquire', keys.lock, (commands) => commands.acquire(keys, owner, leaseMs, op));
        try {
          const reply = await acquire;
          if (reply.granted) return { master, kind: 'granted', token: reply.token };
          // The script names the holder when it refuses.
          return { master, kind: 'refused', ttlMs: reply.ttlMs, holder: withHolders ? reply.holder : undefined };
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
   *
   * Cancels go through the connection's normal command path, not the per-node
   * fast path: a connection that blips right after granting queues the cancel
   * and sends it on reconnect, instead of dropping it and leaving the grant
   * until its TTL. Only the wait for it is bounded by the per-node timeout.
   */
  async undoRound(keys: LockKeys, owner: string, round: Round): Promise<void> {
    const granted: Promise<unknown>[] = [];
    for (const vote of round.votes) {
      if (vote.kind === 'granted') {
        const cancel = this.cancel(vote.master, keys, owner, round.op, true);
        granted.push(withinMs(cancel, vote.master.perNodeTimeoutMs, () => new Error('cancel still running')).catch(() => undefined));
      } else if (vote.kind === 'failed' && !wasNotSent(vote.error)) {
        void this.cancel(vote.master, keys, owner, round.op, false);
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
      if (vote.kind === 'failed' && !wasNotSent(vote.error)) void this.cancel(vote.master, keys, owner, round.op, false);
    }
  }

  /**
   * Cancels the round's acquire on `master`, tracked as background work (close
   * waits for it). Sent even while the connection is down: ioredis may resend
   * the acquire after reconnecting, and the cancel, queued behind it on the
   * same connection, runs after it. Never rejects; a failure is reported when
   * `report` (the master had granted: its grant stays until its TTL).
   */
  private cancel(master: Master, keys: LockKeys, owner: string, op: string, report: boolean): Promise<void> {
    const work = master.commands.release(keys, { owner, op: nanoid(), ifOp: op, all: true }).then(
      () => undefined,
      (error: unknown) => {
        if (report && !this.stopping.signal.aborted) this.onError(asError(error));
      },
    );
    this.track(work);
    return work;
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
   * hold; by owner elsewhere, to sweep a late grant). Released iff a majority
   * released it; lost iff so many masters holding it answered "not held" that
   * fewer than Q can still have had it; otherwise undecided.
   *
   * Whatever the verdict, every master of the hold that has not answered yet,
   * or failed, keeps being released in the background (token-checked) until
   * it answers, the hold's lease is over, or the client closes: an undecided
   * unlock must not leave a key on a minority to sit out its TTL.
   */
  async release(hold: RedlockHold): Promise<ReleaseResult> {
    const holding = hold.holdingMasters;
    const sent = this.masters.map((master): Promise<ReleaseReply> | undefined => {
      const token = hold.tokens[master.index];
      const request = { owner: hold.owner, op: nanoid(), all: true, ...(token !== undefined ? { token } : {}) };
      const call = master.commands.release(hold.keys, request);
      if (token !== undefined) return call;
      // Not one of the hold's masters: a late grant there was cancelled, so
      // this only sweeps leftovers; its answer does not count.
      this.track(call);
      return undefined;
    });
    const tallyOf = (results: readonly (Settled<ReleaseReply | undefined> | undefined)[]) => {
      let released = 0;
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
      if (holding.length - notHeld < this.quorum) return { outcome: 'lost', reason: keyExists ? 'taken' : 'expired' };
      return undefined;
    };
    const gathered = await gather(
      sent.map((call) => () => call ?? Promise.resolve(undefined)),
      decide,
    );
    for (const index of holding) {
      const result = gathered.results[index];
      const master = this.masters[index] as Master;
      if (result?.ok) hold.tokens[index] = undefined; // answered: nothing of this hold is left there
      else this.releaseInBackground(hold, master, sent[index] as Promise<ReleaseReply>);
    }
    if (gathered.verdict) return gathered.verdict;
    const released = new Set(holding.filter((index) => gathered.results[index]?.ok && gathered.results[index]?.value?.released));
    return {
      outcome: 'undecided',
      error: new QuorumError(
        `lock "${hold.name}": the release was confirmed by ${released.size} of ${this.size} masters, fewer than a majority ` +
          `(${this.quorum}), and the others did not answer; the hold is given up (lost, reason "unreachable") and the ` +
          'release is retried in the background until its lease is over',
        this.masters.map((master) => {
          const result = gathered.results[master.index];
          return toMasterVote(master, released.has(master.index), result && !result.ok ? result.error : undefined);
        }),
        this.quorum,
      ),
    };
  }

  /**
   * Removes what is left of a lost hold on the masters (token-checked, so never
   * a newer hold), in the background and retried like the leftovers of a
   * release: waiters need not sit out its TTL.
   */
  sweep(hold: RedlockHold): void {
    for (const index of hold.holdingMasters) {
      const master = this.masters[index] as Master;
      this.releaseInBackground(hold, master, this.sendRelease(hold, master));
    }
  }

  /**
   * Keeps releasing `hold` on `master` (token-checked) until the master
   * answers, the hold's lease is over (then its key expires on its own), or
   * the client closes: after `first` (a call already sent) fails, it tries
   * again after a delay growing from the per-node timeout to commandTimeoutMs.
   * Bounded: a try is bounded by commandTimeoutMs, and the lease by its deadline.
   */
  private releaseInBackground(hold: RedlockHold, master: Master, first: Promise<ReleaseReply>): void {
    const index = master.index;
    const token = hold.tokens[index];
    if (token === undefined) return;
    const stop = this.stopping.signal;
    const work = async (): Promise<void> => {
      let call = first;
      let delayMs = master.perNodeTimeoutMs;
      for (;;) {
        let failure: Error;
        try {
          await call;
          // Released, or not held with this token: nothing of this hold is left there.
          if (hold.tokens[index] === token) hold.tokens[index] = undefined;
          return;
        } catch (error) {
          failure = asError(error);
        }
        if (stop.aborted) return;
        const leftMs = hold.deadline - monotonicNow();
        if (leftMs <= 0) {
          // Its lease is over: the key expires on its own. Worth knowing, never thrown.
          this.onError(failure);
          return;
        }
        await sleep(Math.min(delayMs, leftMs), undefined, { signal: stop, ref: false }).catch(() => undefined);
        if (stop.aborted) return;
        delayMs = Math.min(delayMs * 2, this.commandTimeoutMs);
        call = this.sendRelease(hold, master);
      }
    };
    this.track(work());
  }

  private sendRelease(hold: RedlockHold, master: Master): Promise<ReleaseReply> {
    const token = hold.tokens[master.index] as string;
    return master.commands.release(hold.keys, { owner: hold.owner, op: nanoid(), all: true, token });
  }

  // ---- background work -------------------------------------------------------

  private track(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.background.add(settled);
    void settled.then(() => this.background.delete(settled));
  }

  /** On close: background work stops retrying at once (calls already sent still run). */
  stopBackground(): void {
    this.stopping.abort();
  }

  /** Resolves once no background work is left (cancels, releases being retried). Never rejects. */
  async backgroundSettled(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  // ---- reads and admin -----------------------------------------------------

  /**
   * True iff one owner holds the lock on a majority; false once no owner can
   * (partial grants of different owners are not a lock). Counted per owner.
   */
  async isLockedOnMajority(name: string, keys: LockKeys): Promise<boolean> {
    await this.ready();
    const gathered = await gather(
      this.masters.map((master) => () => this.readLease(master, keys)),
      (results) => {
        const answered = results.filter((r): r is { ok: true; value: LeaseRead } => r?.ok === true);
        return decideLocked(
          answered.map((r) => r.value.owner),
          this.size - answered.length,
          this.size,
        );
      },
    );
    if (gathered.verdict !== undefined) return gathered.verdict;
    throw this.readError(name, 'isLocked', gathered.results, (value) => value.owner !== undefined);
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

  /**
   * How long the owner that holds the lock on a majority still has it there:
   * the Q-th largest PTTL among its keys (−2 when no owner holds a majority,
   * −1 no TTL). Keys of other owners never count.
   */
  async quorumTtl(name: string, keys: LockKeys): Promise<number> {
    await this.ready();
    const gathered = await gather(
      this.masters.map((master) => () => this.readLease(master, keys)),
      () => undefined,
    );
    const failed = gathered.results.filter((r) => !r?.ok).length;
    if (failed > toleratedFailures(this.size)) throw this.readError(name, 'PTTL', gathered.results, () => true);
    // A master that did not answer counts as free: the answer can only be lower, never an overstated lease.
    return quorumOwnerPttl(
      gathered.results.flatMap((r) => (r?.ok ? [r.value] : [])),
      this.quorum,
    );
  }

  /**
   * Who holds the lock on `master` and its PTTL, read atomically (MULTI), so
   * the TTL is the one of that owner's key; bounded by the per-node timeout.
   */
  private readLease(master: Master, keys: LockKeys): Promise<LeaseRead> {
    return master.quick('a read', keys.lock, async (commands) => {
      let replies: [Error | null, unknown][] | null;
      try {
        replies = await commands.redis.multi().hget(keys.lock, 'owner').pttl(keys.lock).exec();
      } catch (error) {
        throw readFailure(error, master, keys);
      }
      const [owner, pttl] = replies ?? [];
      if (!owner || !pttl) throw readFailure(new Error('the transaction was discarded'), master, keys);
      if (owner[0] || pttl[0]) throw readFailure(owner[0] ?? pttl[0], master, keys);
      return { owner: typeof owner[1] === 'string' ? owner[1] : undefined, pttlMs: Number(pttl[1]) };
    });
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

/** A failed read as core reports one: an error reply is a RedisCommandError naming the key, anything else RedisUnavailableError. */
function readFailure(error: unknown, master: Master, keys: LockKeys): Error {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof Error && error.name === 'ReplyError') {
    return new RedisCommandError(`master ${master.name} refused a read of "${keys.lock}": ${message}`, keys.lock, { cause: error });
  }
  return new RedisUnavailableError(`master ${master.name} could not read "${keys.lock}": ${message}`, { cause: error });
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
