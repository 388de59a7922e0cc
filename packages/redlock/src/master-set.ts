import { nanoid } from 'nanoid';
import { RedisUnavailableError } from '@org/rlock-core';
import {
  DelayQueue,
  gather,
  leaseDeadline,
  monotonicNow,
  withinMs,
  type AcquireReply,
  type BackgroundWork,
  type Hold,
  type LockKeys,
  type ReleaseReply,
  type Settled,
} from '@org/rlock-core/internal';
import { QuorumError, type MasterVote } from './errors.js';
import type { Master } from './master.js';
import * as Q from './quorum.js';

/** Tries of a spread to one master, 2, 4 … 64 ms apart: others' failed partial grants go within a round trip or two. */
const SPREAD_TRIES = 7;
/** An uncontended round asks the rest of the masters this long after its first majority, unless that settled it first. */
const REST_AFTER_MS = 1;

/** What a Redlock hold keeps (its `grant`): per master the op whose grant it holds there (undefined: none), and whether more may join. */
export class Grants {
  readonly tokens: (string | undefined)[];
  /** Released, lost or undone: nothing joins any more. */
  done = false;
  /** Done by a call to every master behind the round's acquires (a release, an undo), which sweeps a late grant. */
  swept = false;
  /** Local hand-offs in a row (QuorumLockStore.release), and when the round that began them was won. */
  handoffs = 0;
  readonly wonAt = monotonicNow();
  /** Won by a call that had lost to other clients: they wait too. */
  contended = false;
  /** Masters whose answer to the round is still out: a spread there would count twice. */
  readonly pending = new Set<number>();
  /** Masters an acquire of this hold was sent to (its round's, a spread's): the only ones a release goes to. */
  readonly asked = new Set<number>();

  constructor(
    size: number,
    readonly keys: LockKeys,
    /** The owner on the masters: the task that won the round (a hand-off keeps it). */
    readonly owner: string,
    /** The op of the round that won them: its grant on a master is `<owner>|<op>`. */
    readonly op: string,
    /** When its keys expire on the masters (monotonic, nominal): a spread grant's lease ends with them. */
    public expiresAt: number,
    /** Until when a grant counts: lease − drift from the send. */
    public deadline: number,
  ) {
    this.tokens = new Array<undefined>(size).fill(undefined);
  }
}

/** One master's answer to a round's acquire. */
export interface AcquireVote {
  readonly master: Master;
  readonly kind: 'granted' | 'refused' | 'failed';
  /** Refused: the lock's TTL there (−1: none) and its holder. */
  readonly ttlMs?: number;
  readonly holder?: string;
  readonly error?: Error;
  /** Failed after it was sent: it may still run, so it is cancelled. */
  readonly sent?: boolean;
  /** Failed by the per-node timeout: its outcome comes later (see late). */
  readonly late?: boolean;
}

/** One round: the acquire script on a majority first (or on its gate, contended), then on the rest. */
export interface Round {
  /** Per master; undefined where nothing was sent or no answer came before the verdict. */
  readonly votes: readonly (AcquireVote | undefined)[];
  readonly tally: Q.AcquireTally;
  readonly verdict: Q.AcquireVerdict;
  readonly grants: Grants;
  /** The gate's refusal, when the round stopped there. */
  readonly gateRefusal?: AcquireVote;
}

/** What a renewal (or an extension) of one hold found. */
export interface RenewResult {
  readonly verdict: 'renewed' | 'gone' | 'taken' | 'undecided';
  readonly votes: readonly MasterVote[];
}

/** The N masters and the quorum rule: each call is decided as soon as the replies so far settle it. */
export class MasterSet {
  readonly quorum: number;
  private readonly started: Promise<unknown>; // every master's first connect (ready: it settled)
  private ready = false;
  private spreads = 0;
  /** Per lock key, the order its rounds ask the masters in (orderOf). */
  private readonly orders = new Map<string, number[]>();
  /** The one timer every uncontended round's later asks wait on. */
  private readonly staggered = new DelayQueue();
  /** Acquire rounds under way: a round alone asks every master at once (latency), one among others the first Q first (load). */
  private rounds = 0;

  constructor(
    readonly masters: readonly Master[],
    private readonly driftFactor: number,
    readonly perNodeTimeoutMs: number,
    /** Where leftovers are released in the background (the client's: close() waits for them). */
    private readonly background: BackgroundWork,
    private readonly commandTimeoutMs: number,
    private readonly quarantineMs: number,
    /** Reports a failure in the background; never throws. */
    private readonly onError: (error: Error) => void,
  ) {
    this.quorum = Q.quorumOf(masters.length);
    this.started = Promise.all(masters.map((master) => master.firstConnect)).then(() => (this.ready = true));
  }

  get size(): number {
    return this.masters.length;
  }

  /** The masters whose run is known, in the order a round on `key` asks them (rankOf), kept per key until a run changes. */
  private orderOf(key: string): number[] {
    let order = this.orders.get(key);
    if (order) return order;
    if (this.orders.size >= 1_024) this.orders.clear();
    order = Q.rankOf(
      this.masters.map((master) => master.run?.runId),
      key,
    );
    this.orders.set(key, order);
    return order;
  }

  /** A master's run was read: every quarantine is worked out again. */
  identified(): void {
    this.orders.clear();
    const ends = Q.quarantineEnds(
      this.masters.map((master) => master.run),
      this.quarantineMs,
      Q.STARTED_TOGETHER_MS,
    );
    this.masters.forEach((master, index) => (master.quarantinedUntil = ends[index] as number));
  }

  /**
   * Runs the acquire script on the masters in the lock's order (orderOf; one
   * that does not vote fails at once), each bounded by the per-node timeout.
   * Contended: the first voting one (the gate), then the others unless it
   * refused. Uncontended and alone (no other round under way): every master at
   * once, so the round and its release wait on the fastest Q. Uncontended among
   * others: the first Q, then the rest once those settle without winning or
   * REST_AFTER_MS later (skipped when the hold is released by then: a lock then
   * unlock costs Q calls, not N, on a busy client). Won once ≥ Q granted with
   * lease − elapsed − drift > 0, elapsed from before the first send; later
   * answers join the hold (late). Else decided when all answered or timed out.
   */
  async acquireRound(keys: LockKeys, owner: string, leaseMs: number, op: string, contended: boolean): Promise<Round> {
    if (!this.ready) await this.started;
    const alone = this.rounds++ === 0;
    try {
      return await this.round(keys, owner, leaseMs, op, contended, alone);
    } finally {
      this.rounds--;
    }
  }

  private async round(keys: LockKeys, owner: string, leaseMs: number, op: string, contended: boolean, alone: boolean): Promise<Round> {
    const sentAt = monotonicNow();
    const grants = new Grants(this.size, keys, owner, op, sentAt + leaseMs, leaseDeadline(sentAt, leaseMs, this.driftFactor));
    let timedOut: Error | undefined; // made when the timer fires: an Error costs its stack trace
    const votes: (AcquireVote | undefined)[] = [];
    // A vote is read once, when it comes: a grant read after its master stopped voting (it restarted) does not count.
    const voteOf = (index: number, result: Settled<AcquireReply>): AcquireVote => (votes[index] ??= this.voteOf(index, result, timedOut, grants));
    let verdict: Q.AcquireVerdict | undefined;
    const late = (index: number, result: Settled<AcquireReply>): void => this.late(op, grants, verdict, this.voteOf(index, result, timedOut, grants));
    const call = (master: Master) => (): Promise<AcquireReply> => {
      if (!master.voting) return Promise.reject(master.notVoting('acquire', keys.lock));
      if (verdict === 'acquired') grants.pending.add(master.index); // asked after the round was won: its answer joins the hold (late)
      grants.asked.add(master.index);
      return master.store.acquire(keys, owner, leaseMs, op);
    };
    const order = this.orderOf(keys.lock);
    const gateIndex = contended ? order.find((index) => this.masters[index]?.voting) : undefined;
    const gate = gateIndex === undefined ? undefined : this.masters[gateIndex];
    const stagger =
      contended || alone || order.length < this.quorum
        ? undefined
        : { first: order.slice(0, this.quorum), afterMs: REST_AFTER_MS, skip: () => grants.done || verdict !== 'acquired', timers: this.staggered };
    const timeout = {
      ms: this.perNodeTimeoutMs,
      error: () => (timedOut ??= new RedisUnavailableError(`no answer to acquire "${keys.lock}" within ${this.perNodeTimeoutMs} ms`)),
    };
    if (gate) {
      const first = (
        await gather(
          [call(gate)],
          (results) => results[0],
          timeout,
          (_, result) => late(gate.index, result),
        )
      ).results[0];
      const vote = voteOf(gate.index, first as Settled<AcquireReply>);
      if (vote.kind === 'refused') return { votes, tally: { granted: 0, refused: 1, failed: 0 }, verdict: 'not-acquired', grants, gateRefusal: vote };
    }
    let tally = { granted: 0, refused: 0, failed: 0 };
    await gather(
      this.masters.map((master) => (master === gate ? () => Promise.resolve(null as never) : call(master))),
      (results, settled) => {
        tally = { granted: 0, refused: 0, failed: 0 };
        results.forEach((result, index) => result && tally[voteOf(index, result).kind]++);
        const validity = Q.validityMs(leaseMs, monotonicNow() - sentAt, this.driftFactor);
        if (tally.granted >= this.quorum && validity > 0) return (verdict = 'acquired');
        return settled === this.size ? (verdict = Q.decideAcquire(tally, this.size, validity)) : undefined;
      },
      timeout,
      late,
      stagger,
    );
    if (verdict === 'acquired') {
      this.masters.forEach((master, index) => {
        const vote = votes[index];
        if (vote?.kind === 'granted') grants.tokens[index] = op;
        else if (vote?.kind === 'refused') this.spread(grants, master, SPREAD_TRIES);
        else if ((!vote || vote.late) && grants.asked.has(index))
          grants.pending.add(index); // not asked yet: it adds itself
        else if (vote?.sent) void this.cancel(master, keys, owner, op, false);
      });
    }
    return { votes, tally, verdict: verdict ?? 'not-acquired', grants };
  }

  private voteOf(index: number, result: Settled<AcquireReply>, timedOut: Error | undefined, grants: Grants): AcquireVote {
    const master = this.masters[index] as Master;
    if (!result.ok) return { master, kind: 'failed', sent: grants.asked.has(index), late: result.error === timedOut, error: result.error };
    const reply = result.value;
    if (!reply.granted) return { master, kind: 'refused', ttlMs: reply.retryInMs, holder: reply.holder };
    if (master.voting) return { master, kind: 'granted' };
    return { master, kind: 'failed', sent: true, error: master.notVoting('a grant', master.name) };
  }

  /**
   * An answer after its round was decided: a won round takes a grant within
   * validity and spreads to a master that refused; what may stay is cancelled
   * (a lost round's undoRound cancels its own).
   */
  private late(op: string, grants: Grants, verdict: Q.AcquireVerdict | undefined, vote: AcquireVote): void {
    const { master } = vote;
    const won = verdict === 'acquired';
    grants.pending.delete(master.index);
    if (won && vote.kind === 'granted' && !grants.done && master.voting && monotonicNow() < grants.deadline) grants.tokens[master.index] = op;
    else if (won && vote.kind === 'refused') this.spread(grants, master, SPREAD_TRIES);
    else if ((won || verdict === undefined) && (vote.kind === 'granted' || vote.sent) && !grants.swept)
      void this.cancel(master, grants.keys, grants.owner, op, false);
  }

  /**
   * Spreads a held lock to `master` (others' failed partial grants were there,
   * or it came back empty): the acquire script as the hold's owner for the rest
   * of its lease, up to `tries` times. A grant within validity joins the hold; else it is cancelled.
   */
  spread(grants: Grants, master: Master, tries: number): void {
    const op = `spread/${++this.spreads}`;
    let tried = 0;
    const attempt = (): void => {
      if (grants.done || !master.voting || grants.tokens[master.index] !== undefined || grants.pending.has(master.index) || monotonicNow() >= grants.deadline)
        return;
      grants.asked.add(master.index);
      const work = master.store.acquire(grants.keys, grants.owner, Math.ceil(grants.expiresAt - monotonicNow()), op).then(
        (reply) => {
          if (reply.granted && !grants.done && monotonicNow() < grants.deadline) grants.tokens[master.index] = op;
          else if (reply.granted && !grants.swept) void this.cancel(master, grants.keys, grants.owner, op, false);
          else if (!reply.granted && ++tried < tries) setTimeout(attempt, 2 ** tried).unref();
        },
        () => this.cancel(master, grants.keys, grants.owner, op, false),
      );
      this.background.track(work);
    };
    setTimeout(attempt, 1).unref();
  }

  /**
   * Cancels a lost round's acquire by op where it granted or failed after the
   * send (the tombstone refuses it late), or everywhere when `round` is
   * undefined (the engine undoes a try; `grants`: what it won). Resolves once
   * the granting masters answered (bounded per node), so "not acquired" leaves
   * no key on a live master; a cancel on a blipping connection goes out on
   * reconnect, behind the acquire it cancels.
   */
  async undoRound(keys: LockKeys, owner: string, op: string, round: Round | undefined, grants?: Grants): Promise<void> {
    if (grants?.handoffs && !grants.done) this.drop(grants); // an undone hand-off: nobody's now
    if (grants) grants.done = grants.swept = true;
    const granted: Promise<unknown>[] = [];
    this.masters.forEach((master, index) => {
      const vote = round?.votes[index];
      if (vote?.kind === 'granted')
        granted.push(withinMs(this.cancel(master, keys, owner, op, true), this.perNodeTimeoutMs, () => undefined).catch(() => undefined));
      else if (round === undefined || vote?.sent) void this.cancel(master, keys, owner, op, false);
    });
    await Promise.all(granted);
  }

  /** Cancels acquire `op` on `master` (tracked); a failure is reported when `report` (a grant then stays until its TTL). */
  private cancel(master: Master, keys: LockKeys, owner: string, op: string, report: boolean): Promise<void> {
    const work = master.store.cancel(keys, owner, op).then(
      () => undefined,
      (error: unknown) => {
        if (report && !this.background.stopped) this.onError(error as Error);
      },
    );
    this.background.track(work);
    return work;
  }

  roundError(name: string, round: Round): QuorumError {
    const { failed } = round.tally;
    return this.error(`lock "${name}": ${failed} of ${this.size} masters failed, timed out or sit out a quarantine; no majority was possible`, (index) => [
      round.votes[index]?.kind === 'granted',
      round.votes[index]?.error,
    ]);
  }

  /** A QuorumError with every master's vote: `vote(index)` is [granted, error]. */
  private error(message: string, vote: (index: number) => [boolean, Error | undefined]): QuorumError {
    return new QuorumError(message, this.votes(vote), this.quorum);
  }

  private votes(vote: (index: number) => [boolean, Error | undefined]): MasterVote[] {
    return this.masters.map((master, index) => {
      const [granted, error] = vote(index);
      return error ? { master: master.name, granted, error } : { master: master.name, granted };
    });
  }

  /**
   * Renews the batch with one renew.lua call per master where a hold has a token;
   * each decided by decideRenewal, `renewed` only within validity. A renewed
   * hold forgets grants found gone and spreads to voting masters where it has none,
   * also where the answer came after the verdict (forgetGone).
   */
  async renew(items: readonly { readonly grants: Grants; readonly leaseMs: number }[]): Promise<RenewResult[]> {
    const sentAt = monotonicNow();
    const sent = this.masters.map((master) => items.filter((item) => item.grants.tokens[master.index] !== undefined));
    const sentTokens = sent.map((mine, index) => mine.map(({ grants }) => grants.tokens[index] as string));
    const calls = this.masters.map((master) => (): Promise<number[]> => {
      const mine = sent[master.index] as typeof items;
      if (mine.length === 0) return Promise.resolve([]);
      const tokens = sentTokens[master.index] as string[];
      return master.store.renewItems(
        mine.map(({ grants, leaseMs }, k) => ({ key: grants.keys.lock, owner: grants.owner, token: tokens[k] as string, leaseMs })),
      );
    });
    // Masters are asked in order and a restarted one tends to answer last, after the verdict: its "gone"
    // still counts, or a master that came back empty is taken again only when it happens to answer early.
    const renewedItems = new Set<(typeof items)[number]>();
    let decided = false;
    const deferred: (() => void)[] = [];
    const late = (index: number, result: Settled<number[]>): void => {
      if (!result.ok) return;
      const forget = (): void =>
        (sent[index] as typeof items).forEach((item, k) => {
          if (result.value[k] === 0 && renewedItems.has(item)) this.forgetGone(item.grants, this.masters[index] as Master, sentTokens[index]?.[k] as string);
        });
      if (decided) forget();
      else deferred.push(forget);
    };
    type Results = readonly (Settled<number[]> | undefined)[];
    const codeOf = (results: Results, index: number, item: (typeof items)[number]): number | 'none' | 'pending' | 'failed' => {
      const k = (sent[index] as typeof items).indexOf(item);
      const result = results[index];
      return k === -1 ? 'none' : result === undefined ? 'pending' : result.ok ? (result.value[k] ?? 'failed') : 'failed';
    };
    const verdictOf = (results: Results, item: (typeof items)[number]): Q.RenewVerdict => {
      const tally = { holding: 0, renewed: 0, gone: 0, taken: 0, failed: 0, pending: 0 };
      for (const code of this.masters.map((_, index) => codeOf(results, index, item))) {
        if (code === 'none') continue;
        tally.holding++;
        tally[code === 'pending' ? 'pending' : code === 1 ? 'renewed' : code === 0 ? 'gone' : code === -1 ? 'taken' : 'failed']++;
      }
      return Q.decideRenewal(tally, this.size);
    };
    const { results } = await gather(calls, (results) => (items.every((item) => verdictOf(results, item) !== 'pending') ? true : undefined), undefined, late);
    const elapsedMs = monotonicNow() - sentAt;
    const outcomes = items.map((item) => {
      const { grants, leaseMs } = item;
      let verdict = verdictOf(results, item);
      if (verdict === 'pending' || (verdict === 'renewed' && Q.validityMs(leaseMs, elapsedMs, this.driftFactor) <= 0)) verdict = 'undecided';
      const codes = this.masters.map((_, index) => codeOf(results, index, item));
      if (verdict === 'renewed' && !grants.done) {
        renewedItems.add(item);
        grants.expiresAt = Math.max(grants.expiresAt, sentAt + leaseMs);
        grants.deadline = Math.max(grants.deadline, leaseDeadline(sentAt, leaseMs, this.driftFactor));
        for (const master of this.masters) {
          if (codes[master.index] === 0) grants.tokens[master.index] = undefined;
          if (grants.tokens[master.index] === undefined && master.voting) this.spread(grants, master, 1);
        }
      }
      const votes = this.votes((index) => {
        const result = results[index];
        return [codes[index] === 1, codes[index] === 'pending' ? new Error('no answer yet') : result?.ok === false ? result.error : undefined];
      });
      return { verdict, votes };
    });
    decided = true;
    for (const forget of deferred) forget();
    return outcomes;
  }

  /** A renewed hold's grant on `master` was found gone by a late answer: forgotten (unless replaced since) and taken again there when it votes. */
  private forgetGone(grants: Grants, master: Master, token: string): void {
    if (grants.done || grants.tokens[master.index] !== token) return;
    grants.tokens[master.index] = undefined;
    if (master.voting) this.spread(grants, master, 1);
  }

  /**
   * The final release: on every asked master, by token where the hold has one
   * (never a newer hold), by owner elsewhere (sweeping a grant on its way).
   * Released iff a majority released; lost iff fewer than Q holding masters can
   * still have it; else a QuorumError (the engine finishes with releaseRest).
   * Masters that did not answer are retried in the background until the lease
   * ends: a key must not sit out its TTL on a minority.
   */
  async release(hold: Hold, keys: LockKeys, op: string): Promise<ReleaseReply> {
    const grants = hold.grant as Grants;
    const { tokens } = grants;
    grants.done = grants.swept = true;
    // An unanswered acquire counts, released by the round's op: the release runs after it on the same connection,
    // so its answer is the truth about that grant (no wait for the round's answers), and a retry deletes only that grant.
    const unanswered = [...grants.pending];
    for (const index of unanswered) tokens[index] ??= grants.op;
    const holding = this.masters.filter((master) => tokens[master.index] !== undefined).map((master) => master.index);
    // Asked without a token (a spread on its way): a sweep by owner, whose answer does not count. Never asked: nothing.
    const sent = this.masters.map((master) =>
      grants.asked.has(master.index) ? master.store.release(keys, grants.owner, tokens[master.index], op) : undefined,
    );
    sent.forEach((call, index) => call && !holding.includes(index) && this.background.track(call));
    const gathered = await gather(
      holding.map((index) => () => sent[index] as Promise<ReleaseReply>),
      (results) => {
        const released = results.filter((result) => result?.ok && result.value.released);
        const notHeld = results.filter((result) => result?.ok && !result.value.released);
        // receivers > 1: other clients wait too, and the engine lets them go first.
        const receivers = Math.max(0, ...released.map((result) => (result?.ok && result.value.released && result.value.receivers) || 0));
        // Released by Q holding masters. Masters never asked are free but never held it: counting them would
        // call a hold released while most of its grants may still stand.
        if (released.length >= this.quorum) return { released: true, remaining: 0, receivers } as const;
        if (holding.length - notHeld.length < this.quorum) {
          // Taken where the hold had a grant; a pending acquire that found another owner there was never ours.
          const taken = results.some(
            (result, k) => !unanswered.includes(holding[k] as number) && result?.ok && !result.value.released && result.value.reason === 'taken',
          );
          return { released: false, reason: taken ? 'taken' : 'expired' } as const;
        }
        return undefined;
      },
    );
    holding.forEach((index, k) => {
      const token = tokens[index];
      const forget = (): void => void (tokens[index] === token && (tokens[index] = undefined)); // nothing of this hold is left there
      if (gathered.results[k]?.ok) forget();
      else if (gathered.verdict)
        this.background.track((sent[index] as Promise<unknown>).then(forget, () => this.releaseInBackground(hold, this.masters[index] as Master)));
    });
    if (gathered.verdict) return gathered.verdict;
    const message = `lock "${hold.name}": fewer than a majority (${this.quorum} of ${this.size}) confirmed the release and the others did not answer`;
    throw this.error(`${message}; the hold is given up (lost, "unreachable") and the release is retried in the background until its lease is over`, (index) => {
      const result = gathered.results[holding.indexOf(index)];
      return [result?.ok === true && result.value.released, result?.ok === false ? result.error : undefined];
    });
  }

  /** Releases `grants` (token-checked) wherever they may still be; rejects while a master did not answer (what answered is forgotten). */
  async releaseRest(grants: Grants): Promise<'released' | 'gone'> {
    grants.done = true;
    const results = await Promise.allSettled(
      this.masters
        .filter((master) => grants.tokens[master.index] !== undefined)
        .map(async (master) => {
          await master.store.release(grants.keys, grants.owner, grants.tokens[master.index], nanoid());
          grants.tokens[master.index] = undefined;
        }),
    );
    const failure = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failure) throw failure.reason;
    return 'released';
  }

  /** Releases `grants` in the background (a hand-off nobody took); a failure is reported. */
  drop(grants: Grants): void {
    this.background.track(this.releaseRest(grants).catch((error: unknown) => this.onError(error as Error)));
  }

  /** Keeps releasing `hold` on `master` after its release failed, until it answers or the lease is over. */
  private releaseInBackground(hold: Hold, master: Master): void {
    const { tokens, owner, keys } = hold.grant as Grants;
    const token = tokens[master.index];
    const plan = { until: hold.deadline, minDelayMs: this.perNodeTimeoutMs, maxDelayMs: this.commandTimeoutMs };
    const retried = this.background.retry(async () => {
      await master.store.release(keys, owner, token, nanoid());
      if (tokens[master.index] === token) tokens[master.index] = undefined;
      return true;
    }, plan);
    // Its lease is over: the key expires on its own. Worth knowing, never thrown.
    void retried.then((done) => {
      if (!done && !this.background.stopped)
        this.onError(new Error(`master ${master.name}: the release of "${hold.name}" did not get through before its lease ran out`));
    });
  }

  /** True iff one owner holds the lock on a majority (partial grants of different owners are not a lock). */
  isLockedOnMajority(name: string, keys: LockKeys): Promise<boolean> {
    return this.readLeases(name, keys, 'isLocked', (answered, unknown) =>
      Q.decideLocked(
        answered.map((read) => read.owner),
        unknown,
        this.size,
      ),
    );
  }

  /** Whether `owner` holds the lock on a majority; false once more than N − Q masters show it free or someone else's. */
  heldOnMajority(name: string, keys: LockKeys, owner: string): Promise<boolean> {
    return this.readLeases(name, keys, 'a read of the holder', (answered) => {
      const mine = answered.filter((read) => read.owner === owner).length;
      return mine >= this.quorum ? true : answered.length - mine > Q.toleratedFailures(this.size) ? false : undefined;
    });
  }

  /** The Q-th largest PTTL among the keys of the owner holding a majority (−2: none does); a master that did not answer counts as free. */
  quorumTtl(name: string, keys: LockKeys): Promise<number> {
    return this.readLeases(name, keys, 'PTTL', (answered, unknown, settled) =>
      settled === this.size && unknown <= Q.toleratedFailures(this.size) ? Q.quorumOwnerPttl(answered, this.quorum) : undefined,
    );
  }

  /** Reads holder and PTTL on every voting master (per-node timeout) until `decide` answers. @throws QuorumError when it never does */
  private async readLeases<V>(
    name: string,
    keys: LockKeys,
    what: string,
    decide: (answered: Q.LeaseRead[], unknown: number, settled: number) => V | undefined,
  ): Promise<V> {
    if (!this.ready) await this.started;
    const gathered = await gather(
      this.masters.map((master) => () => (master.voting ? master.store.readLease(keys) : Promise.reject(master.notVoting('a read', keys.lock)))),
      (results, settled) => {
        const answered = results.flatMap((result) => (result?.ok ? [result.value] : []));
        return decide(answered, this.size - answered.length, settled);
      },
      { ms: this.perNodeTimeoutMs, error: () => new RedisUnavailableError(`no answer to a read of "${keys.lock}" within ${this.perNodeTimeoutMs} ms`) },
    );
    if (gathered.verdict !== undefined) return gathered.verdict;
    throw this.readError(name, what, gathered.results, (read) => read.owner !== undefined);
  }

  /** Deletes the lock on every master whoever holds it; true if it released it on any. */
  async forceUnlock(name: string, keys: LockKeys): Promise<boolean> {
    const { results } = await gather(
      this.masters.map((master) => () => master.store.forceUnlock(keys)),
      () => undefined,
    );
    const released = results.some((result) => result?.ok && result.value);
    const failures = results.flatMap((result) => (result && !result.ok ? [result.error] : []));
    if (!released && failures.length > Q.toleratedFailures(this.size)) throw this.readError(name, 'forceUnlock', results, (value) => value);
    for (const failure of failures) this.onError(failure);
    return released;
  }

  private readError<T>(name: string, what: string, results: readonly (Settled<T> | undefined)[], granted: (value: T) => boolean): QuorumError {
    const failed = results.filter((result) => !result?.ok).length;
    return this.error(`lock "${name}": ${what} failed or timed out on ${failed} of ${this.size} masters; no majority answered alike`, (index) => {
      const result = results[index];
      return result?.ok ? [granted(result.value), undefined] : [false, result?.error ?? new Error('no answer')];
    });
  }
}
