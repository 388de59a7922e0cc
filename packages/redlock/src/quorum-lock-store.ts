import {
  backoffDelayMs,
  keysOfHold,
  leaseDeadline,
  monotonicNow,
  type AcquireReply,
  type Hold,
  type HubSubscription,
  type LockKeys,
  type LockRequest,
  type LockStore,
  type OwnerHoldRead,
  type QueueSubscription,
  type ReleaseReply,
  type RenewableHold,
  type RenewOutcome,
  type WaitQueue,
} from '@org/rlock-core/engine';
import { QuorumError } from './errors.js';
import type { MasterSet, MasterTokens } from './master-set.js';
import type { ResolvedRetryOptions } from './options.js';
import { classifyLoss, expiryWaitMs, leadsSplit, releasesNeeded, toleratedFailures, validityMs } from './quorum.js';

/** Renewal kind of Redlock holds. */
export const REDLOCK_KIND = 'redlock';

/** What one acquisition call keeps between its rounds. */
interface CallState {
  /** When rounds without a possible majority began, while they go on. */
  failingSince: number | undefined;
  /** Collisions in a row (split votes, rounds without a quorum): the backoff grows with it. */
  streak: number;
  /** The leader of a split retries at once, once per streak. */
  led: boolean;
}

/**
 * The reentrant lock's protocol across N independent masters: a try is a
 * round of core's acquire script on every master, acquired iff a majority
 * granted it within its validity; reentrancy is counted in the client (only
 * the first acquire and the last release reach the masters); the engine's
 * loop, hold, renewal and release do the rest. What only Redlock has lives
 * here and in MasterSet: rounds, quorum, drift, per-master timeouts, retries.
 */
export class QuorumLockStore implements LockStore {
  readonly counting = 'client';
  readonly headOnly = true;
  readonly kind = REDLOCK_KIND;
  private readonly calls = new WeakMap<LockRequest, CallState>();
  private readonly wakes = new Map<string, QuorumWake>();

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
   * One round. Won: the hold's grant is each master's token (stragglers are
   * cancelled). Lost: every grant it made is cleared before this returns, and
   * the refusal says how long to wait: after a loss to a clear holder, until
   * enough of the refusing masters announce a release (or their TTLs run
   * out); after a split vote, a random, growing delay, so contenders stop
   * colliding (the leader of the split retries at once).
   * @throws QuorumError when more than N − Q masters failed: at once for
   *   tryLock, after `unavailableAfterMs` of such rounds for a waiting call
   */
  async acquire(keys: LockKeys, owner: string, leaseMs: number, op: string, request: LockRequest): Promise<AcquireReply> {
    const { masters } = this;
    const state = this.callState(request);
    const round = await masters.acquireRound(keys, owner, leaseMs, op);
    if (round.verdict === 'acquired') {
      state.failingSince = undefined;
      masters.cancelStragglers(keys, owner, op, round);
      const tokens: MasterTokens = round.votes.map((vote) => (vote.kind === 'granted' ? vote.token : undefined));
      return { granted: true, token: undefined, count: undefined, grant: tokens };
    }
    // Partial grants are cleared at once, or they would block every contender (split-vote livelock).
    await masters.undoRound(keys, owner, op, round);
    const wake = this.wakes.get(keys.channel);
    if (round.verdict === 'no-quorum') {
      const error = masters.roundError(nameOf(keys), round);
      state.failingSince ??= monotonicNow();
      if (request.failFast || monotonicNow() - state.failingSince >= this.unavailableAfterMs) throw error;
      wake?.expectNothing();
      return { granted: false, retryInMs: this.backoff(++state.streak) };
    }
    state.failingSince = undefined;
    const refused = round.votes.filter((vote) => vote.kind === 'refused');
    const holders = refused.map((vote) => vote.holder);
    // A majority that came too late is a split too: nobody else holds it.
    if (round.tally.granted >= masters.quorum || classifyLoss(holders, masters.size) === 'split') {
      wake?.expectNothing();
      state.streak++;
      if (!state.led && leadsSplit(round.tally.granted, holders)) {
        state.led = true;
        return { granted: false, retryInMs: 0 };
      }
      return { granted: false, retryInMs: this.backoff(state.streak) };
    }
    // Lost to a clear holder: a new streak starts after it.
    state.streak = 0;
    state.led = false;
    const needed = releasesNeeded(round.tally.granted, masters.size);
    let sleepMs = Math.min(expiryWaitMs(refused.map((vote) => vote.ttlMs ?? -1), needed), this.maxSleepMs);
    // A refusing master whose announcements cannot be heard, or a failed
    // master that may come back: do not rely on announcements alone.
    if (round.tally.failed > 0 || !wake || refused.some((vote) => !wake.isAcked(vote.master.index))) {
      sleepMs = Math.min(sleepMs, this.retry.maxDelayMs);
    }
    wake?.expect(
      refused.map((vote) => vote.master.index),
      needed,
    );
    return { granted: false, retryInMs: sleepMs };
  }

  cancel(keys: LockKeys, owner: string, op: string): Promise<void> {
    return this.masters.undoRound(keys, owner, op, undefined);
  }

  async extend(hold: Hold, leaseMs: number): Promise<'renewed' | 'gone' | 'taken'> {
    const sentAt = monotonicNow();
    const [result] = await this.masters.renew([{ hold, leaseMs }]);
    if (result?.verdict === 'renewed' && monotonicNow() < leaseDeadline(sentAt, leaseMs, this.driftFactor)) return 'renewed';
    if (result?.verdict === 'gone' || result?.verdict === 'taken') return result.verdict;
    throw new QuorumError(
      `lock "${hold.name}": the lease could not be extended to ${leaseMs} ms on a majority (${this.masters.quorum} of ${this.masters.size}) within its validity`,
      result?.votes ?? [],
      this.masters.quorum,
    );
  }

  release(keys: LockKeys, hold: Hold, op: string): Promise<ReleaseReply> {
    return this.masters.release(hold, keys, op);
  }

  finishRelease(keys: LockKeys, hold: Hold): Promise<'released' | 'gone'> {
    return this.masters.releaseRest(hold, keys);
  }

  onMessage(_payload: string, queue: WaitQueue): void {
    queue.released();
  }

  /**
   * Subscribes a lock's channel on every master and resolves once enough of
   * them acknowledged (N − Q + 1: one of any majority then announces to this
   * client), or every subscription settled. A master that is down does not
   * hold the waiter up; its subscription is acknowledged when it is back.
   */
  subscribe(queue: WaitQueue): QueueSubscription {
    const wake = new QuorumWake(queue);
    this.wakes.set(queue.channel, wake);
    const needed = toleratedFailures(this.masters.size) + 1;
    let acked = 0;
    let settled = 0;
    let resolveReady: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (resolveReady = resolve));
    const check = (): void => {
      if (acked >= needed || settled >= this.masters.size) resolveReady();
    };
    wake.subscriptions = this.masters.masters.map((master) => {
      const subscription = master.hub.subscribe(queue.channel, () => wake.announced(master.index));
      if (!master.connected) settled++;
      subscription.ready.then(
        () => {
          acked++;
          if (master.connected) settled++;
          check();
        },
        () => {
          if (master.connected) settled++;
          check();
        },
      );
      return subscription;
    });
    check();
    return {
      ready,
      close: () => {
        for (const subscription of wake.subscriptions) subscription.close();
        if (this.wakes.get(queue.channel) === wake) this.wakes.delete(queue.channel);
      },
    };
  }

  batchKey(): string {
    // Every hold lives on the same masters.
    return 'masters';
  }

  /**
   * A batch renewed with one renew-n call per master: `renewed` iff a majority
   * renewed it within its validity (lease − elapsed − drift > 0); `gone` or
   * `taken` iff fewer than a majority can still have it. When failures leave a
   * hold undecided the call rejects with a QuorumError: the watchdog retries,
   * and loses the hold as `unreachable` if its deadline passes first.
   */
  async renew(holds: readonly RenewableHold[]): Promise<RenewOutcome[]> {
    const items = holds.map((hold) => ({ hold: hold as Hold, leaseMs: hold.leaseMs }));
    const startedAt = monotonicNow();
    const results = await this.masters.renew(items);
    const elapsed = monotonicNow() - startedAt;
    return results.map((result, index) => {
      const { hold, leaseMs } = items[index] as { hold: Hold; leaseMs: number };
      if (result.verdict === 'renewed' && validityMs(leaseMs, elapsed, this.driftFactor) > 0) return 'renewed';
      if (result.verdict === 'gone' || result.verdict === 'taken') return result.verdict;
      throw new QuorumError(
        `lock "${hold.name}": the lease could not be renewed on a majority (${this.masters.quorum} of ${this.masters.size}) within its validity`,
        result.votes,
        this.masters.quorum,
      );
    });
  }

  async clear(hold: Hold): Promise<boolean> {
    return (await this.masters.releaseRest(hold, keysOfHold(hold))) === 'released';
  }

  isLocked(keys: LockKeys, name: string): Promise<boolean> {
    return this.masters.isLockedOnMajority(name, keys);
  }

  async ownerHold(keys: LockKeys, name: string, owner: string): Promise<OwnerHoldRead> {
    // The count is the client's: the masters count each hold once.
    return { held: await this.masters.heldOnMajority(name, keys, owner), count: 0 };
  }

  pttl(keys: LockKeys, name: string): Promise<number> {
    return this.masters.quorumTtl(name, keys);
  }

  forceUnlock(keys: LockKeys, name: string): Promise<boolean> {
    return this.masters.forceUnlock(name, keys);
  }

  private callState(request: LockRequest): CallState {
    let state = this.calls.get(request);
    if (!state) {
      state = { failingSince: undefined, streak: 0, led: false };
      this.calls.set(request, state);
    }
    return state;
  }

  private backoff(streak: number): number {
    return backoffDelayMs(streak, this.retry.minDelayMs, this.retry.maxDelayMs, Math.random(), this.retry.factor);
  }
}

/**
 * When announcements on a lock's channel wake its local head: after a loss to
 * a clear holder, once `needed` of the masters that refused announced a
 * release (a majority may be free again); during a split's backoff, not at
 * all; otherwise at the first one.
 */
class QuorumWake {
  subscriptions: HubSubscription[] = [];
  private mode: 'any' | 'some' | 'none' = 'any';
  private expected = new Set<number>();
  private readonly seen = new Set<number>();
  private needed = 0;

  constructor(private readonly queue: WaitQueue) {}

  isAcked(index: number): boolean {
    return this.subscriptions[index]?.acked === true;
  }

  expect(masters: readonly number[], needed: number): void {
    this.mode = 'some';
    this.expected = new Set(masters);
    this.seen.clear();
    this.needed = needed;
  }

  expectNothing(): void {
    this.mode = 'none';
  }

  announced(index: number): void {
    if (this.mode === 'none') return;
    if (this.mode === 'some') {
      if (!this.expected.has(index)) return;
      this.seen.add(index);
      if (this.seen.size < this.needed) return;
    }
    this.mode = 'any';
    this.queue.released();
  }
}

/** The lock's name, from its key `<prefix>:{<name>}`. */
function nameOf(keys: LockKeys): string {
  return keys.lock.slice(keys.lock.indexOf('{') + 1, -1);
}
