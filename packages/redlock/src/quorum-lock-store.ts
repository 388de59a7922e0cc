import {
  EXCLUSIVE_LOCK,
  backoffDelayMs,
  driftMs,
  leaseDeadline,
  monotonicNow,
  type AcquireReply,
  type Hold,
  type HubSubscription,
  type LockKeys,
} from '@org/rlock-core/internal';
import type { AcquireTerms, LockStore, OwnerHoldRead, QueueSubscription, ReleaseReply, RenewableHold, RenewOutcome, WaitQueue } from '@org/rlock-core/internal';
import { leaseLockKeys } from './lease-lock/keys.js';
import { QuorumError } from './errors.js';
import type { AcquireVote, Grants, MasterSet } from './master-set.js';
import type { ResolvedRetryOptions } from './options.js';
import { classifyLoss, expiryWaitMs, releasesNeeded, toleratedFailures } from './quorum.js';

/** Renewal kind of Redlock holds. */
const REDLOCK_KIND = 'redlock';
/** Local hand-offs of one lock in a row, and for how long (ms), before a release lets other clients in. */
const MAX_HANDOFFS = 32;
const HANDOFF_WINDOW_MS = 100;

/** What one acquisition call keeps between its rounds: it lost one (its next go to the gate first), since when no majority is possible, losses in a row without a clear holder. */
interface CallState {
  lost: boolean;
  failingSince: number | undefined;
  streak: number;
}

/**
 * The reentrant lock's protocol across N masters, driven by the engine: a try
 * is a round, acquired iff a majority granted within validity; reentrancy is
 * counted in the client. What only Redlock has lives here and in MasterSet.
 */
export class QuorumLockStore implements LockStore {
  readonly counting = 'client';
  readonly headOnly = true;
  readonly kind = REDLOCK_KIND;
  readonly variant = Object.freeze({ ...EXCLUSIVE_LOCK, object: 'redlock' });
  readonly keysOf = leaseLockKeys; // a master holds a lease lock
  private readonly calls = new WeakMap<AcquireTerms, CallState>();
  private readonly wakes = new Map<string, QuorumWake>();
  /** Per lock: the grants a task of this client holds, which task (the masters show the owner that won them), and the op that took them. */
  private readonly live = new Map<string, { grants: Grants; holder: string; op: string }>();
  /** Per lock: grants a release handed off, until the next local waiter takes them. */
  private readonly parked = new Map<string, { grants: Grants; timer: NodeJS.Timeout }>();

  constructor(
    private readonly masters: MasterSet,
    readonly driftFactor: number,
    private readonly retry: ResolvedRetryOptions,
    /** How long a waiting call goes on through rounds without a possible majority (commandTimeoutMs). */
    private readonly unavailableAfterMs: number,
    /** Longest sleep between rounds without news: a third of the watchdog lease. */
    private readonly maxSleepMs: number,
  ) {}

  /**
   * One try: a hand-off parked for this client's tasks, extended to the lease
   * on a majority; else a round, gate first when contended (local waiters, or
   * this call lost before). Lost: every grant is cleared before this returns,
   * then it waits for enough refusing masters' announcements or TTLs; when
   * nobody won, it goes to the gate at once, then backs off at random.
   * @throws QuorumError when more than N − Q masters failed: at once for
   *   tryLock, after `unavailableAfterMs` of such rounds for a waiting call
   */
  async acquire(keys: LockKeys, owner: string, leaseMs: number, op: string, terms: AcquireTerms): Promise<AcquireReply> {
    const { masters } = this;
    const state = this.calls.get(terms) ?? { lost: false, failingSince: undefined, streak: 0 };
    this.calls.set(terms, state);
    const wake = this.wakes.get(keys.channel);
    // Held by a task of this client: a round could only lose, and must not reenter under that task's owner.
    if (this.live.get(keys.lock)?.grants.done === false) {
      wake?.expect([], 0);
      return { granted: false, retryInMs: this.retry.maxDelayMs };
    }
    const parked = this.parked.get(keys.lock);
    if (parked) {
      this.parked.delete(keys.lock);
      clearTimeout(parked.timer);
      // Taken as it is while a majority's lease covers this one from now; else extended by
      // its drift allowance beyond it, so the next hand-offs (≈ lease × driftFactor later) need no round trip.
      const { grants } = parked;
      const covered = leaseDeadline(monotonicNow(), leaseMs, this.driftFactor) <= grants.deadline;
      if (covered || (await masters.renew([{ grants, leaseMs: Math.ceil(leaseMs + driftMs(leaseMs, this.driftFactor)) }]))[0]?.verdict === 'renewed') {
        return this.granted(keys, owner, op, grants);
      }
      masters.drop(grants);
    }
    wake?.begin();
    const round = await masters.acquireRound(keys, owner, leaseMs, op, state.lost || wake !== undefined);
    if (round.verdict === 'acquired') {
      wake?.expect([], 0);
      round.grants.contended = state.lost;
      return this.granted(keys, owner, op, round.grants);
    }
    const lostBefore = state.lost;
    state.lost = true;
    // Partial grants are cleared at once, or they would block every contender (split-vote livelock).
    await masters.undoRound(keys, owner, op, round);
    if (round.verdict === 'no-quorum') {
      state.failingSince ??= monotonicNow();
      const failure = masters.roundError(nameOf(keys), round);
      if (terms.failFast || monotonicNow() - state.failingSince >= this.unavailableAfterMs) throw failure;
      wake?.expectNothing();
      // A call whose waitMs runs out meanwhile says that no majority answered, not that the lock was held.
      return { granted: false, retryInMs: this.backoff(++state.streak), failure };
    }
    state.failingSince = undefined;
    const refused = round.gateRefusal ? [round.gateRefusal] : round.votes.filter((vote): vote is AcquireVote => vote?.kind === 'refused');
    // Nobody won (a split vote, or a majority too late): the gate settles the next round.
    if (
      !round.gateRefusal &&
      (round.tally.granted >= masters.quorum ||
        classifyLoss(
          refused.map((vote) => vote.holder),
          masters.size,
        ) === 'split')
    ) {
      wake?.expectNothing();
      return { granted: false, retryInMs: lostBefore ? this.backoff(++state.streak) : 0 };
    }
    state.streak = 0;
    const needed = round.gateRefusal ? 1 : releasesNeeded(round.tally.granted, masters.size);
    if (
      wake?.expect(
        refused.map((vote) => vote.master.index),
        needed,
      )
    )
      return { granted: false, retryInMs: 0 };
    const sleepMs = Math.min(
      expiryWaitMs(
        refused.map((vote) => vote.ttlMs ?? -1),
        needed,
      ),
      this.maxSleepMs,
    );
    // A refusing master whose announcements cannot be heard, or a failed master that may come back: do not rely on announcements alone.
    const deaf = round.tally.failed > 0 || !wake || refused.some((vote) => !wake.isAcked(vote.master.index));
    return { granted: false, retryInMs: deaf ? Math.min(sleepMs, this.retry.maxDelayMs) : sleepMs };
  }

  private granted(keys: LockKeys, holder: string, op: string, grants: Grants): AcquireReply {
    this.live.set(keys.lock, { grants, holder, op });
    return { granted: true, token: undefined, count: undefined, grant: grants };
  }

  private backoff(streak: number): number {
    return backoffDelayMs(streak, this.retry.minDelayMs, this.retry.maxDelayMs, Math.random(), this.retry.factor);
  }

  /** Undoes try `op`: what it won, if it did, is this client's live grants of the lock, taken by that op. */
  cancel(keys: LockKeys, owner: string, op: string): Promise<void> {
    const live = this.live.get(keys.lock);
    return this.masters.undoRound(keys, owner, op, undefined, live?.op === op ? live.grants : undefined);
  }

  async extend(hold: Hold, leaseMs: number): Promise<'renewed' | 'gone' | 'taken'> {
    const [result] = await this.masters.renew([{ grants: hold.grant as Grants, leaseMs }]);
    if (result && result.verdict !== 'undecided') return result.verdict;
    throw new QuorumError(
      `lock "${hold.name}": the lease could not be extended to ${leaseMs} ms on a majority within its validity`,
      result?.votes ?? [],
      this.masters.quorum,
    );
  }

  /**
   * The last release of a hold. While tasks of this client wait (within
   * MAX_HANDOFFS and HANDOFF_WINDOW_MS, with validity to spare), its grants
   * stay for the next local waiter, who extends them on a majority: one
   * renewal instead of a release and a race of every waiting client. The
   * masters keep the first holder's owner; this client keeps its tasks apart.
   * A hand-off nobody takes within commandTimeoutMs is released.
   */
  release(keys: LockKeys, hold: Hold, op: string): Promise<ReleaseReply> {
    const grants = hold.grant as Grants;
    const wake = this.wakes.get(keys.channel);
    if (this.live.get(keys.lock)?.grants === grants) this.live.delete(keys.lock);
    const now = monotonicNow();
    if (
      !wake?.waiting ||
      grants.handoffs >= MAX_HANDOFFS ||
      now - grants.wonAt >= HANDOFF_WINDOW_MS ||
      now >= grants.deadline - this.masters.perNodeTimeoutMs
    ) {
      // Other clients wait too: their turn first (held back before the announcements come).
      if (wake?.waiting && grants.contended) wake.queue.yieldFor();
      return this.masters.release(hold, keys, op);
    }
    grants.handoffs++;
    const timer = setTimeout(() => {
      if (this.parked.get(keys.lock)?.grants !== grants) return;
      this.parked.delete(keys.lock);
      this.masters.drop(grants);
    }, this.unavailableAfterMs);
    this.parked.set(keys.lock, { grants, timer: timer.unref() });
    wake.handOff();
    return Promise.resolve({ released: true, remaining: 0 });
  }

  /** Releases every hand-off still waiting for its taker (on close). */
  dropParked(): void {
    for (const { grants, timer } of this.parked.values()) {
      clearTimeout(timer);
      this.masters.drop(grants);
    }
    this.parked.clear();
  }

  finishRelease(_keys: LockKeys, hold: Hold): Promise<'released' | 'gone'> {
    return this.masters.releaseRest(hold.grant as Grants);
  }

  /** 'unlock' (lease-lock release or cancel): one local waiter tries; anything else is dropped. */
  onMessage(payload: string, queue: WaitQueue): boolean {
    if (payload !== 'unlock') return false;
    queue.released();
    return true;
  }

  /**
   * Subscribes a lock's channel on every master; ready once N − Q + 1 of them
   * acknowledged (one of any majority then announces to this client) or every
   * subscription settled. A master that is down does not hold waiters up.
   */
  subscribe(queue: WaitQueue): QueueSubscription {
    const wake = new QuorumWake(queue);
    this.wakes.set(queue.channel, wake);
    const { masters } = this.masters;
    let acked = 0;
    let settled = masters.filter((master) => !master.connected).length; // down: never holds waiters up
    let markReady: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    wake.subscriptions = masters.map((master) => {
      // 'unlock' is all a master announces; anything else (anyone may PUBLISH) is dropped and counted.
      const subscription = master.hub.subscribe(queue.channel, (payload) => (payload === 'unlock' ? wake.announced(master.index) : queue.drop()));
      const counted = master.connected;
      const settle = (ok: boolean): void => {
        acked += ok ? 1 : 0;
        settled += counted ? 1 : 0;
        if (acked > toleratedFailures(masters.length) || settled >= masters.length) markReady();
      };
      subscription.ready.then(
        () => settle(true),
        () => settle(false),
      );
      return subscription;
    });
    if (settled >= masters.length) markReady();
    return {
      ready,
      close: () => {
        for (const subscription of wake.subscriptions) subscription.close();
        if (this.wakes.get(queue.channel) === wake) this.wakes.delete(queue.channel);
      },
    };
  }

  batchKey(): string {
    return 'masters'; // every hold lives on the same masters
  }

  /** A watchdog batch, one renew.lua call per master; an undecided hold rejects (QuorumError): the watchdog retries until its deadline. */
  async renew(holds: readonly RenewableHold[]): Promise<RenewOutcome[]> {
    const results = await this.masters.renew(holds.map((hold) => ({ grants: (hold as Hold).grant as Grants, leaseMs: hold.leaseMs })));
    return results.map((result, index) => {
      if (result.verdict !== 'undecided') return result.verdict;
      const name = (holds[index] as Hold).name;
      throw new QuorumError(`lock "${name}": the lease could not be renewed on a majority within its validity`, result.votes, this.masters.quorum);
    });
  }

  async clear(hold: Hold): Promise<boolean> {
    return (await this.masters.releaseRest(hold.grant as Grants)) === 'released';
  }

  isLocked(keys: LockKeys, name: string): Promise<boolean> {
    return this.masters.isLockedOnMajority(name, keys);
  }

  async ownerHold(keys: LockKeys, name: string, owner: string): Promise<OwnerHoldRead> {
    // The count is the client's; the masters show the owner that won the grants.
    const live = this.live.get(keys.lock);
    return { held: await this.masters.heldOnMajority(name, keys, live?.holder === owner ? live.grants.owner : owner), count: 0 };
  }

  pttl(keys: LockKeys, name: string): Promise<number> {
    return this.masters.quorumTtl(name, keys);
  }

  /** Deletes the lock on every master; this client's grants of it, live or parked for a local waiter, are done (never taken or spread again). */
  forceUnlock(keys: LockKeys, name: string): Promise<boolean> {
    const parked = this.parked.get(keys.lock);
    if (parked) clearTimeout(parked.timer);
    this.parked.delete(keys.lock);
    for (const grants of [this.live.get(keys.lock)?.grants, parked?.grants]) if (grants) grants.done = true;
    return this.masters.forceUnlock(name, keys);
  }
}

/**
 * When announcements on a lock's channel wake its local head. During a round
 * they are only noted; after a loss, the head wakes once `needed` of the
 * masters it lost to announced a release (those noted during the round count:
 * a release is never missed); during a backoff, not at all; otherwise at once.
 */
class QuorumWake {
  subscriptions: HubSubscription[] = [];
  private mode: 'any' | 'round' | 'some' | 'none' = 'any';
  private expected: readonly number[] = [];
  private readonly seen = new Set<number>();
  private needed = 0;

  constructor(readonly queue: WaitQueue) {}

  isAcked(index: number): boolean {
    return this.subscriptions[index]?.acked === true;
  }

  /** Tasks of this client wait for the lock. */
  get waiting(): boolean {
    return this.queue.waiters.length > 0;
  }

  /** A release handed the lock to this client's next waiter. */
  handOff(): void {
    this.mode = 'any';
    this.queue.wakeOne();
  }

  begin(): void {
    this.mode = 'round';
    this.seen.clear();
  }

  /** Wakes once `needed` of `masters` announced; true when they already did. */
  expect(masters: readonly number[], needed: number): boolean {
    this.expected = masters;
    this.needed = needed;
    this.mode = this.heard() ? 'any' : 'some';
    return this.mode === 'any';
  }

  expectNothing(): void {
    this.mode = 'none';
  }

  announced(index: number): void {
    if (this.mode === 'none') return;
    this.seen.add(index);
    if (this.mode === 'round' || (this.mode === 'some' && !this.heard())) return;
    this.mode = 'any';
    this.queue.released();
  }

  private heard(): boolean {
    return this.expected.filter((index) => this.seen.has(index)).length >= this.needed;
  }
}

/** The lock's name, from its key `<prefix>:{<name>}`. */
function nameOf(keys: LockKeys): string {
  return keys.lock.slice(keys.lock.indexOf('{') + 1, -1);
}
