import { nanoid } from 'nanoid';
import { monotonicNow, withinMs, type BackgroundWork, type Hold, type LockKeys, type ReleaseReply } from '@org/rlock-core/engine';
import { QuorumError, type MasterVote } from './errors.js';
import { gather, type Settled } from './gather.js';
import { wasNotSent, type Master } from './master.js';
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

/** What a Redlock hold keeps per master: the token each master gave (undefined where it has no grant). */
export type MasterTokens = (string | undefined)[];

/** One master's answer to the acquire of a round. */
export interface AcquireVote {
  readonly master: Master;
  readonly kind: 'granted' | 'refused' | 'failed';
  /** The token this master gave (granted). */
  readonly token?: string;
  /** Remaining TTL of the lock on this master (refused; −1: no TTL). */
  readonly ttlMs?: number;
  /** Who holds it on this master (refused). */
  readonly holder?: string;
  readonly error?: Error;
}

/** One round: the acquire script on every master at once. */
export interface Round {
  readonly votes: readonly AcquireVote[];
  readonly tally: AcquireTally;
  readonly verdict: AcquireVerdict;
}

/** What a renewal (or lease extension) of one hold found. */
export interface RenewResult {
  readonly verdict: Exclude<RenewVerdict, 'pending'>;
  readonly votes: readonly MasterVote[];
}

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
    /** Where leftovers are released in the background (the client's, so close() waits for them). */
    private readonly background: BackgroundWork,
    /** Longest wait between two tries of a background release, in ms. */
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
   * lease − elapsed − drift > 0, elapsed measured from before the sends.
   */
  async acquireRound(keys: LockKeys, owner: string, leaseMs: number, op: string): Promise<Round> {
    await this.ready();
    const sentAt = monotonicNow();
    const votes = await Promise.all(
      this.masters.map(async (master): Promise<AcquireVote> => {
        try {
          const reply = await master.quick('acquire', keys.lock, (store) => store.acquire(keys, owner, leaseMs, op));
          if (reply.granted) return { master, kind: 'granted', token: reply.token as string };
          return { master, kind: 'refused', ttlMs: reply.retryInMs, holder: reply.holder };
        } catch (error) {
          return { master, kind: 'failed', error: asError(error) };
        }
      }),
    );
    const tally: AcquireTally = {
      granted: votes.filter((v) => v.kind === 'granted').length,
      refused: votes.filter((v) => v.kind === 'refused').length,
      failed: votes.filter((v) => v.kind === 'failed').length,
    };
    const validity = validityMs(leaseMs, monotonicNow() - sentAt, this.driftFactor);
    return { votes, tally, verdict: decideAcquire(tally, this.size, validity) };
  }

  /**
   * Clears what a lost round left: cancels the round's acquire (by its op, so
   * nothing else of the owner is touched) on every master that granted it or
   * failed to answer (its acquire may still run: the cancel's tombstone
   * refuses it). Resolves once the masters that granted answered (bounded by
   * the per-node timeout), so a caller told "not acquired" finds no key of its
   * own on a live master; the cancels to failed masters go on in the
   * background. Cancels go through the connection's normal command path: a
   * connection that blips right after granting queues the cancel and sends it
   * on reconnect, behind the acquire it cancels.
   */
  async undoRound(keys: LockKeys, owner: string, op: string, round: Round | undefined): Promise<void> {
    const granted: Promise<unknown>[] = [];
    for (const master of this.masters) {
      const vote = round?.votes[master.index];
      if (vote?.kind === 'granted') {
        const cancel = this.cancel(master, keys, owner, op, true);
        granted.push(withinMs(cancel, master.perNodeTimeoutMs, () => new Error('cancel still running')).catch(() => undefined));
      } else if (vote === undefined || (vote.kind === 'failed' && !wasNotSent(vote.error))) {
        void this.cancel(master, keys, owner, op, false);
      }
    }
    await Promise.all(granted);
  }

  /** After a won round: cancels the grant a failed or late master may still make, so the hold is exactly on the masters that answered in time. */
  cancelStragglers(keys: LockKeys, owner: string, op: string, round: Round): void {
    for (const vote of round.votes) {
      if (vote.kind === 'failed' && !wasNotSent(vote.error)) void this.cancel(vote.master, keys, owner, op, false);
    }
  }

  /** Cancels acquire `op` on `master`, in the background; a failure is reported when `report` (the master had granted: its grant stays until its TTL). */
  private cancel(master: Master, keys: LockKeys, owner: string, op: string, report: boolean): Promise<void> {
    const work = master.store.cancel(keys, owner, op, true).then(
      () => undefined,
      (error: unknown) => {
        if (report && !this.background.stopped) this.onError(asError(error));
      },
    );
    this.background.track(work);
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
  async renew(items: readonly { readonly hold: Hold; readonly leaseMs: number }[]): Promise<RenewResult[]> {
    type Codes = number[] | undefined;
    const tokensOf = (index: number): MasterTokens => (items[index] as { hold: Hold }).hold.grant as MasterTokens;
    // positions[m][k] = index in `items` of the k-th item sent to master m
    const positions = this.masters.map((master) => items.flatMap((_, index) => (tokensOf(index)[master.index] !== undefined ? [index] : [])));
    const calls = this.masters.map((master) => async (): Promise<Codes> => {
      const mine = positions[master.index] as number[];
      if (mine.length === 0) return undefined;
      return master.store.renewItems(
        mine.map((index) => {
          const { hold, leaseMs } = items[index] as { hold: Hold; leaseMs: number };
          return { key: hold.key, owner: hold.owner, token: tokensOf(index)[master.index] as string, leaseMs };
        }),
      );
    });
    const codeOf = (results: readonly (Settled<Codes> | undefined)[], master: number, index: number): number | 'pending' | 'failed' | 'none' => {
      const k = (positions[master] as number[]).indexOf(index);
      if (k === -1) return 'none';
      const result = results[master];
      if (result === undefined) return 'pending';
      return result.ok ? (result.value?.[k] ?? 'failed') : 'failed';
    };
    const verdictOf = (results: readonly (Settled<Codes> | undefined)[], index: number): RenewVerdict => {
      const tally = { holding: 0, renewed: 0, gone: 0, taken: 0, failed: 0, pending: 0 };
      for (const master of this.masters) {
        const code = codeOf(results, master.index, index);
        if (code === 'none') continue;
        tally.holding++;
        if (code === 'pending') tally.pending++;
        else if (code === 1) tally.renewed++;
        else if (code === 0) tally.gone++;
        else if (code === -1) tally.taken++;
        else tally.failed++;
      }
      return decideRenewal(tally, this.size);
    };
    const gathered = await gather(calls, (results) => (items.every((_, index) => verdictOf(results, index) !== 'pending') ? true : undefined));
    return items.map((_, index) => {
      const verdict = verdictOf(gathered.results, index);
      return {
        verdict: verdict === 'pending' ? 'undecided' : verdict,
        votes: this.masters.map((master) => {
          const code = codeOf(gathered.results, master.index, index);
          const result = gathered.results[master.index];
          if (code === 'none') return toMasterVote(master, false);
          if (code === 'pending') return toMasterVote(master, false, new Error('no answer yet'));
          return toMasterVote(master, code === 1, result && !result.ok ? result.error : undefined);
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
   * fewer than Q can still have had it; otherwise it rejects with a
   * QuorumError (the engine gives the hold up and finishes the release with
   * {@link releaseRest}). When it is decided, masters that have not answered
   * or failed keep being released in the background until they answer or the
   * hold's lease is over: a key must not sit out its TTL on a minority.
   */
  async release(hold: Hold, keys: LockKeys, op: string): Promise<ReleaseReply> {
    const tokens = hold.grant as MasterTokens;
    const holding = this.masters.filter((master) => tokens[master.index] !== undefined).map((master) => master.index);
    const sent = this.masters.map((master): Promise<ReleaseReply> | undefined => {
      const call = master.store.releaseAs(keys, hold.owner, tokens[master.index], op, true);
      if (tokens[master.index] !== undefined) return call;
      // Not one of the hold's masters: a late grant there was cancelled, so
      // this only sweeps leftovers; its answer does not count.
      this.background.track(call);
      return undefined;
    });
    const decide = (results: readonly (Settled<ReleaseReply | undefined> | undefined)[]): ReleaseReply | undefined => {
      let released = 0;
      let notHeld = 0;
      let taken = false;
      for (const index of holding) {
        const value = results[index]?.ok ? (results[index] as { value: ReleaseReply }).value : undefined;
        if (value?.released) released++;
        else if (value) {
          notHeld++;
          taken ||= value.reason === 'taken';
        }
      }
      if (released >= this.quorum) return { released: true, remaining: 0 };
      if (holding.length - notHeld < this.quorum) return { released: false, reason: taken ? 'taken' : 'expired' };
      return undefined;
    };
    const gathered = await gather(
      sent.map((call) => () => call ?? Promise.resolve(undefined)),
      decide,
    );
    for (const index of holding) {
      const result = gathered.results[index];
      if (result?.ok) tokens[index] = undefined; // answered: nothing of this hold is left there
      else if (gathered.verdict) this.releaseInBackground(hold, keys, this.masters[index] as Master, sent[index] as Promise<ReleaseReply>);
    }
    if (gathered.verdict) return gathered.verdict;
    const released = holding.filter((index) => gathered.results[index]?.ok).length;
    throw new QuorumError(
      `lock "${hold.name}": the release was confirmed by ${released} of ${this.size} masters, fewer than a majority ` +
        `(${this.quorum}), and the others did not answer; the hold is given up (lost, reason "unreachable") and the ` +
        'release is retried in the background until its lease is over',
      this.masters.map((master) => {
        const result = gathered.results[master.index];
        return toMasterVote(master, result?.ok === true && result.value?.released === true, result && !result.ok ? result.error : undefined);
      }),
      this.quorum,
    );
  }

  /**
   * Releases `hold` (token-checked) on every master where it may still be:
   * resolves 'released' once each answered, rejects when one did not (to be
   * tried again). What answered is forgotten, so a retry goes only where needed.
   */
  async releaseRest(hold: Hold, keys: LockKeys): Promise<'released' | 'gone'> {
    const tokens = hold.grant as MasterTokens;
    const results = await Promise.allSettled(
      this.masters
        .filter((master) => tokens[master.index] !== undefined)
        .map(async (master) => {
          await master.store.releaseAs(keys, hold.owner, tokens[master.index], nanoid(), true);
          tokens[master.index] = undefined;
        }),
    );
    const failure = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failure) throw failure.reason;
    return 'released';
  }

  /** Keeps releasing `hold` on `master` after `first` failed, until it answers or the lease is over. */
  private releaseInBackground(hold: Hold, keys: LockKeys, master: Master, first: Promise<ReleaseReply>): void {
    const tokens = hold.grant as MasterTokens;
    const token = tokens[master.index];
    let next = (): Promise<ReleaseReply> => first;
    void this.background
      .retry(
        async () => {
          const call = next();
          next = () => master.store.releaseAs(keys, hold.owner, token, nanoid(), true);
          await call;
          if (tokens[master.index] === token) tokens[master.index] = undefined;
          return true;
        },
        { until: hold.deadline, minDelayMs: master.perNodeTimeoutMs, maxDelayMs: this.commandTimeoutMs },
      )
      .then((done) => {
        // Its lease is over: the key expires on its own. Worth knowing, never thrown.
        if (!done && !this.background.stopped) this.onError(new Error(`master ${master.name}: the release of "${hold.name}" did not get through before its lease ran out`));
      });
  }

  // ---- reads and admin -----------------------------------------------------

  /** True iff one owner holds the lock on a majority; false once no owner can (partial grants of different owners are not a lock). */
  async isLockedOnMajority(name: string, keys: LockKeys): Promise<boolean> {
    return this.readLeases(name, keys, 'isLocked', (answered, unknown) => decideLocked(answered.map((read) => read.owner), unknown, this.size));
  }

  /** Whether `owner` holds the lock on a majority; false iff more than N − Q masters show it free or held by someone else. */
  async heldOnMajority(name: string, keys: LockKeys, owner: string): Promise<boolean> {
    return this.readLeases(name, keys, 'a read of the holder', (answered) => {
      const mine = answered.filter((read) => read.owner === owner).length;
      if (mine >= this.quorum) return true;
      return answered.length - mine > toleratedFailures(this.size) ? false : undefined;
    });
  }

  /**
   * How long the owner that holds the lock on a majority still has it there:
   * the Q-th largest PTTL among its keys (−2 when no owner holds a majority,
   * −1 no TTL). Keys of other owners never count; a master that did not answer
   * counts as free: the answer can only be lower, never an overstated lease.
   */
  async quorumTtl(name: string, keys: LockKeys): Promise<number> {
    return this.readLeases(name, keys, 'PTTL', (answered, unknown, settled) =>
      settled === this.size && unknown <= toleratedFailures(this.size) ? quorumOwnerPttl(answered, this.quorum) : undefined,
    );
  }

  /**
   * Reads who holds the lock and its PTTL on every master (bounded by the
   * per-node timeout) until `decide` answers from the reads so far.
   * @throws QuorumError when every master settled and it could not
   */
  private async readLeases<V>(
    name: string,
    keys: LockKeys,
    what: string,
    decide: (answered: LeaseRead[], unknown: number, settled: number) => V | undefined,
  ): Promise<V> {
    await this.ready();
    const gathered = await gather(
      this.masters.map((master) => () => master.quick('a read', keys.lock, (store) => store.readLease(keys))),
      (results, settled) => {
        const answered = results.flatMap((result) => (result?.ok ? [result.value] : []));
        return decide(answered, this.size - answered.length, settled);
      },
    );
    if (gathered.verdict !== undefined) return gathered.verdict;
    throw this.readError(name, what, gathered.results, (read) => read.owner !== undefined);
  }

  /** Deletes the lock on every master whoever holds it; true if it released it on any. */
  async forceUnlock(name: string, keys: LockKeys): Promise<boolean> {
    const gathered = await gather(
      this.masters.map((master) => () => master.store.forceUnlock(keys)),
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

  private readError<T>(name: string, what: string, results: readonly (Settled<T> | undefined)[], granted: (value: T) => boolean): QuorumError {
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
