import pRetry from 'p-retry';
import {
  ClientClosedError,
  IllegalMonitorStateError,
  LockLostError,
  QuorumError,
  ReentrantLockBase,
  lockKeys,
  monotonicNow,
  type AcquireRequest,
  type LockKeys,
  type TaskContext,
} from '@org/rlock-core';
import type { ReleaseResult, Round } from './master-set.js';
import { classifyLoss, expiryWaitMs, leadsSplit, redlockDeadline, releasesNeeded } from './quorum.js';
import { RedlockHold } from './redlock-hold.js';
import type { RedlockRuntime } from './redlock-runtime.js';
import type { AnnouncementSnapshot, Ticket } from './release-announcements.js';



/**
 * A round that did not win, and how: `held` (one owner has a majority),
 * `split` (nobody won, or too late), or `no-quorum` (too many masters failed).
 * An Error for p-retry, made without a stack trace: losing a round is the
 * common case under contention, not a fault worth a stack.
 */
class LostRound extends Error {
  declare readonly round: Round | undefined;
  declare readonly snapshot: AnnouncementSnapshot | undefined;
  declare readonly kind: 'held' | 'split' | 'no-quorum';
  declare readonly quorumError: QuorumError | undefined;
  /** This contender led the split (strictly most grants). */
  declare readonly leads: boolean;

  static of(
    round: Round | undefined,
    snapshot: AnnouncementSnapshot | undefined,
    kind: 'held' | 'split' | 'no-quorum',
    quorumError?: QuorumError,
  ): LostRound {
    const leads =
      kind === 'split' &&
      round !== undefined &&
      leadsSplit(
        round.tally.granted,
        round.votes.filter((vote) => vote.kind === 'refused').map((vote) => vote.holder),
      );
    return Object.assign(Object.create(LostRound.prototype) as LostRound, { round, snapshot, kind, quorumError, leads, message: 'round lost' });
  }
}

/** Carries any other failure (even a non-Error abort reason) through p-retry unchanged. */
class StopRetry extends Error {
  constructor(readonly reason: unknown) {
    super('stop');
  }
}

/**
 * The reentrant lock across N independent masters (Redlock): see {@link RLock}.
 * The masters run core's scripts unchanged; reentrancy is counted here, so on
 * every master the owner's count stays 1.
 */
export class RedlockLock extends ReentrantLockBase<RedlockHold> {
  readonly keys: LockKeys;

  constructor(
    name: string,
    private readonly runtime: RedlockRuntime,
  ) {
    super(name, runtime);
    this.keys = lockKeys(runtime.keyPrefix, name);
  }

  /** True when one owner holds the lock on a majority of the masters (partial grants of several owners are not a lock). */
  async isLocked(): Promise<boolean> {
    this.runtime.assertOpen();
    return this.runtime.masters.isLockedOnMajority(this.name, this.keys);
  }

  /**
   * True when the current task's hold is held here (not lost, within its
   * deadline) and a majority of the masters confirm it. A hold this client
   * already knows lost is not held, whatever the masters still say: safety
   * before liveness.
   */
  async isHeldByCurrentTask(): Promise<boolean> {
    const owner = this.ownerOf(this.requireTask('isHeldByCurrentTask'));
    this.runtime.assertOpen();
    if (this.runtime.holds.current(this.keys.lock, owner)?.certain !== true) return false;
    return (await this.runtime.masters.heldOnMajority(this.name, this.keys, owner)).held;
  }

  /** The current task's hold count (counted in the client) if its hold is held here and a majority of masters confirm it, else 0. */
  async getHoldCount(): Promise<number> {
    const owner = this.ownerOf(this.requireTask('getHoldCount'));
    this.runtime.assertOpen();
    const hold = this.runtime.holds.current(this.keys.lock, owner);
    if (hold?.certain !== true) return 0;
    const found = await this.runtime.masters.heldOnMajority(this.name, this.keys, owner);
    return found.held && hold.certain ? hold.count : 0;
  }

  /** How long the owner holding a majority still has it: the Q-th largest PTTL among its keys (−2 free, −1 no TTL). */
  async remainTimeToLive(): Promise<number> {
    this.runtime.assertOpen();
    return this.runtime.masters.quorumTtl(this.name, this.keys);
  }

  /** Deletes the lock on every master, wakes waiters, marks this client's holds of it lost (`forced`); true if released on any master. */
  async forceUnlock(): Promise<boolean> {
    this.runtime.assertOpen();
    const released = await this.runtime.masters.forceUnlock(this.name, this.keys);
    for (const hold of this.runtime.holds.holdsOf(this.keys.lock)) hold.lose('forced');
    return released;
  }

  // ---- acquisition -------------------------------------------------------

  protected async acquireFor(task: TaskContext, request: AcquireRequest): Promise<RedlockHold | undefined> {
    const { runtime } = this;
    const owner = this.ownerOf(task);
    const waitUntil = request.waitMs === undefined ? Number.POSITIVE_INFINITY : monotonicNow() + request.waitMs;
    return runtime.holds.serialize(this.keys.lock, owner, async () => {
      runtime.assertOpen();
      request.signal?.throwIfAborted();
      const current = runtime.holds.current(this.keys.lock, owner);
      if (current?.active && (await this.reenter(current, request))) return current;
      const hold = await this.acquireFresh(owner, request, waitUntil);
      if (hold && request.signal?.aborted) {
        // The caller gave up while the winning round was being recorded: it will
        // never unlock what it does not know it has, so the hold is given back
        // at once rather than left to the watchdog forever (principle 2).
        await this.finalRelease(hold).catch((error: unknown) => {
          if (!(error instanceof LockLostError)) runtime.backgroundError(error);
        });
        throw request.signal.reason;
      }
      return hold;
    });
  }

  /**
   * A nested acquisition by the owner of an active hold: counted here only. It
   * reaches the masters only when it asks for a lease ending later than the
   * hold's (and the watchdog does not already keep it), to extend the lease
   * there with the renew script, under the same rule: a majority within
   * validity. False when the hold turned out lost (the caller then acquires
   * anew, as a new generation): its deadline passed (a late timer or watchdog
   * has not said so yet), or the extension found it gone or taken.
   * @throws QuorumError when failures leave the extension undecided (the hold stands as it was).
   */
  private async reenter(hold: RedlockHold, request: AcquireRequest): Promise<boolean> {
    const { runtime } = this;
    if (!hold.certain) {
      // Past its deadline the lease may have run out on the masters: counting a
      // nested acquisition here would answer "acquired" for a lock others may hold.
      hold.lose(hold.renewed ? 'unreachable' : 'expired');
      return false;
    }
    const leaseMs = request.leaseMs ?? runtime.watchdogTimeoutMs;
    const covered =
      (hold.renewed && leaseMs <= hold.leaseMs) || redlockDeadline(monotonicNow(), leaseMs, runtime.driftFactor) <= hold.deadline;
    if (covered) {
      hold.acquired(undefined, request.leaseMs);
      runtime.acquired(hold);
      return true;
    }
    const sentAt = monotonicNow();
    const [result] = await runtime.masters.renew([{ hold, leaseMs }]);
    if (!hold.active) return false;
    const late = monotonicNow() >= redlockDeadline(sentAt, leaseMs, runtime.driftFactor);
    if (result?.verdict === 'renewed' && !late) {
      // An extension that lands after an abort stays (it only lengthens the
      // lease, which is never shortened), but the acquisition is not counted.
      request.signal?.throwIfAborted();
      hold.acquired(sentAt, request.leaseMs);
      runtime.acquired(hold);
      return true;
    }
    if (result?.verdict === 'gone' || result?.verdict === 'taken') {
      hold.lose(result.verdict === 'gone' ? 'expired' : 'taken');
      return false;
    }
    throw new QuorumError(
      `lock "${this.name}": the lease could not be extended to ${leaseMs} ms on a majority (${runtime.masters.quorum} of ${runtime.masters.size}) within its validity`,
      result?.votes ?? [],
      runtime.masters.quorum,
    );
  }

  /**
   * A first acquisition: one round at once (unless local tasks already wait:
   * then it queues behind them), then, as the head of the lock's local queue,
   * rounds until acquired, `waitMs`, or the signal. After a lost round it
   * waits for releases to be announced on enough of the masters that refused
   * it (or their TTLs to run out); if the round was a split vote it then also
   * waits a random, growing delay (p-retry), so contenders stop colliding.
   */
  private async acquireFresh(owner: string, request: AcquireRequest, waitUntil: number): Promise<RedlockHold | undefined> {
    const { runtime } = this;
    const leaseMs = request.leaseMs ?? runtime.watchdogTimeoutMs;
    let quorumFailure: { since: number; error: QuorumError } | undefined;
    if (request.waitMs === 0 || !runtime.announcements.hasWaiters(this.keys.channel)) {
      let first;
      try {
        first = await this.round(owner, request, leaseMs, false);
      } catch (error) {
        if (!(error instanceof QuorumError) || request.failFast || request.waitMs === 0) throw error;
        quorumFailure = { since: monotonicNow(), error };
      }
      if (first instanceof RedlockHold) return first;
      if (request.waitMs === 0) return undefined;
      if (monotonicNow() >= waitUntil) {
        if (quorumFailure) throw quorumFailure.error;
        return undefined;
      }
    }
    const ticket = await runtime.announcements.join(this.keys.channel, waitUntil - monotonicNow(), request.signal);
    let hold: RedlockHold | undefined;
    try {
      if (!(await ticket.turn(waitUntil - monotonicNow(), request.signal))) return undefined;
      const handoff = ticket.takeHandoff();
      if (handoff) {
        // A sibling task just took the lock: a round now could only lose.
        const needed = releasesNeeded(runtime.masters.size - handoff.masters.length, runtime.masters.size);
        const sleepMs = Math.min(handoff.leaseMs, runtime.maxSleepMs, waitUntil - monotonicNow());
        if (sleepMs > 0) await ticket.waitForReleases(handoff.snapshot, handoff.masters, needed, sleepMs, request.signal);
      }
      hold = await this.roundsAsHead(owner, request, leaseMs, waitUntil, ticket, quorumFailure?.since);
      return hold;
    } finally {
      ticket.leave(hold ? { masters: hold.holdingMasters, leaseMs: hold.leaseMs } : undefined);
    }
  }

  /**
   * The rounds of the head of the local queue. Each streak of collisions (split
   * votes, or rounds without a possible majority) is one p-retry run, so its
   * random delay grows with the streak (jittered exponential backoff) and
   * starts small again once a round was lost to a clear holder: a waiter that
   * lost many hand-offs is not pushed back for it.
   */
  private async roundsAsHead(
    owner: string,
    request: AcquireRequest,
    leaseMs: number,
    waitUntil: number,
    ticket: Ticket,
    quorumFailingSince: number | undefined,
  ): Promise<RedlockHold | undefined> {
    const { unavailableAfterMs } = this.runtime;
    const { signal } = request;
    // When rounds without a possible majority began, while they go on.
    let failingSince = quorumFailingSince;
    // p-retry gets a signal of its own, never the caller's: it checks its signal
    // again after an attempt returned, and would throw away a round already won
    // (its hold recorded, renewed by the watchdog, and never released). The
    // caller's abort reaches it to cut a random delay short; a won round is kept
    // here whatever p-retry says, and acquireFor gives it back if the caller
    // aborted meanwhile.
    const delays = new AbortController();
    const onAbort = (): void => delays.abort(signal?.reason);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    let won: RedlockHold | undefined;
    const attempt = async (): Promise<RedlockHold> => {
      let snapshot: AnnouncementSnapshot;
      let result: Awaited<ReturnType<RedlockLock['round']>>;
      try {
        snapshot = ticket.snapshot();
        result = await this.round(owner, request, leaseMs, true);
      } catch (error) {
        // tryLock gives up at once; a waiting call retries (as after a split
        // vote) until the masters were unreachable for commandTimeoutMs, as a
        // single server's lock() would.
        if (error instanceof QuorumError && !request.failFast) {
          failingSince ??= monotonicNow();
          if (monotonicNow() - failingSince < unavailableAfterMs) throw LostRound.of(undefined, undefined, 'no-quorum', error);
        }
        throw new StopRetry(error);
      }
      failingSince = undefined;
      if (result instanceof RedlockHold) {
        won = result;
        return result;
      }
      throw LostRound.of(result.round, snapshot, result.kind);
    };
    try {
      return await this.retryRounds(attempt, delays.signal, request, waitUntil, ticket, () => won);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Runs `attempt` under p-retry, one p-retry run per streak of collisions;
   * after a round lost to a clear holder, waits for its release and starts a
   * new streak. `won()` is the hold a round won, if any: it is returned even
   * if p-retry rejects after it.
   */
  private async retryRounds(
    attempt: () => Promise<RedlockHold>,
    delaySignal: AbortSignal,
    request: AcquireRequest,
    waitUntil: number,
    ticket: Ticket,
    won: () => RedlockHold | undefined,
  ): Promise<RedlockHold | undefined> {
    const { retry } = this.runtime;
    for (;;) {
      try {
        return await pRetry(attempt, {
          retries: Number.POSITIVE_INFINITY,
          minTimeout: retry.minDelayMs,
          maxTimeout: retry.maxDelayMs,
          factor: retry.factor,
          randomize: true,
          maxRetryTime: Math.max(0, waitUntil - monotonicNow()),
          signal: delaySignal,
          // After a split vote, first let the others' partial grants be released.
          onFailedAttempt: async ({ error }) => {
            if (error instanceof LostRound && error.kind === 'split') await this.awaitReleases(error, ticket, waitUntil, request.signal);
          },
          shouldRetry: ({ error }) => error instanceof LostRound && error.kind !== 'held',
          // The leader of a split (most grants) retries at once, once per streak;
          // everyone else waits the random delay.
          shouldConsumeRetry: ({ error, retriesConsumed }) => !(error instanceof LostRound && error.leads && retriesConsumed === 0),
        });
      } catch (error) {
        const hold = won();
        if (hold) return hold; // won, then p-retry saw an abort: the hold is real
        if (error instanceof StopRetry) throw error.reason;
        if (!(error instanceof LostRound)) throw error;
        if (monotonicNow() >= waitUntil) {
          // waitMs ran out: after rounds without a possible majority, say so.
          if (error.quorumError) throw error.quorumError;
          return undefined;
        }
        // Lost to a clear holder: retry as soon as its release is announced.
        await this.awaitReleases(error, ticket, waitUntil, request.signal);
        if (monotonicNow() >= waitUntil) return undefined;
      }
    }
  }

  /**
   * Sleeps after a lost round until releases were announced on enough of the
   * masters that refused it for a majority to be free again, a subscriber
   * reconnected, or the refused keys' TTLs run out (at most a third of the
   * watchdog lease; at most the longest retry delay when a refusing master's
   * announcements cannot be heard).
   */
  private async awaitReleases(lost: LostRound, ticket: Ticket, waitUntil: number, signal: AbortSignal | undefined): Promise<void> {
    const { runtime } = this;
    if (!lost.round || !lost.snapshot) return; // nothing to hear: only the random delay
    const refused = lost.round.votes.filter((vote) => vote.kind === 'refused');
    const needed = releasesNeeded(lost.round.tally.granted, runtime.masters.size);
    if (refused.length < needed) return;
    let sleepMs = Math.min(
      expiryWaitMs(
        refused.map((vote) => vote.ttlMs ?? -1),
        needed,
      ),
      runtime.maxSleepMs,
    );
    // A refusing master whose announcements cannot be heard, or a failed master
    // that may come back: do not rely on announcements alone.
    if (lost.round.tally.failed > 0 || refused.some((vote) => !ticket.isAcked(vote.master.index))) {
      sleepMs = Math.min(sleepMs, runtime.retry.maxDelayMs);
    }
    sleepMs = Math.min(sleepMs, waitUntil - monotonicNow());
    if (sleepMs <= 0) return;
    await ticket.waitForReleases(
      lost.snapshot,
      refused.map((vote) => vote.master.index),
      needed,
      Math.max(1, sleepMs),
      signal,
    );
  }

  /**
   * One round on every master. Won: the hold (stragglers cancelled). Lost:
   * every grant it made is cleared before this returns, and the loss says why.
   * @throws QuorumError when more than N − Q masters failed or timed out
   * @throws the signal's reason, or ClientClosedError
   */
  private round(
    owner: string,
    request: AcquireRequest,
    leaseMs: number,
    withHolders: boolean,
  ): Promise<RedlockHold | { readonly round: Round; readonly kind: 'held' | 'split' }> {
    // close() waits for rounds in flight, so a grant that comes after it began
    // is undone before the connections quit.
    return this.runtime.inFlight(this.runRound(owner, request, leaseMs, withHolders));
  }

  private async runRound(
    owner: string,
    request: AcquireRequest,
    leaseMs: number,
    withHolders: boolean,
  ): Promise<RedlockHold | { readonly round: Round; readonly kind: 'held' | 'split' }> {
    const { runtime } = this;
    const { masters } = runtime;
    runtime.assertOpen();
    request.signal?.throwIfAborted();
    const round = await masters.acquireRound(this.keys, owner, leaseMs, withHolders);
    if (round.verdict === 'acquired' && !request.signal?.aborted && !runtime.closed) {
      masters.cancelStragglers(this.keys, owner, round);
      return this.recordGrant(owner, round, request.leaseMs);
    }
    // Partial grants are cleared at once: left until their TTL they would block
    // every contender (the livelock of split votes).
    await masters.undoRound(this.keys, owner, round);
    request.signal?.throwIfAborted();
    if (runtime.closed) throw new ClientClosedError();
    if (round.verdict === 'no-quorum') throw masters.roundError(this.name, round);
    const kind =
      round.tally.granted >= masters.quorum
        ? 'split' // a majority that came too late: nobody else holds it
        : classifyLoss(
            round.votes.filter((vote) => vote.kind === 'refused').map((vote) => vote.holder),
            masters.size,
          );
    return { round, kind };
  }

  private recordGrant(owner: string, round: Round, fixedLeaseMs: number | undefined): RedlockHold {
    const { runtime } = this;
    const tokens = round.votes.map((vote) => (vote.kind === 'granted' ? vote.token : undefined));
    const previous = runtime.holds.current(this.keys.lock, owner);
    const hold = new RedlockHold(
      this.name,
      this.keys,
      owner,
      tokens,
      runtime.watchdogTimeoutMs,
      runtime.driftFactor,
      runtime.holdObserver,
    );
    if (previous && !previous.active && previous.count > 0) hold.previous = previous;
    runtime.holds.set(hold);
    hold.acquired(round.sentAt, fixedLeaseMs);
    runtime.acquired(hold);
    return hold;
  }

  // ---- release -----------------------------------------------------------

  protected async releaseFor(owner: string, own?: RedlockHold): Promise<void> {
    const { runtime } = this;
    // A handle or withLock releases the hold it took: a lost one is counted off
    // without reaching the masters, so it can never release a newer hold.
    const hold = own ?? runtime.holds.current(this.keys.lock, owner);
    if (!hold || hold.count <= 0) {
      throw new IllegalMonitorStateError(`lock "${this.name}" is not held by the current task (nothing was released)`);
    }
    if (!hold.active) {
      runtime.holds.dropOne(hold);
      throw hold.lostError ?? new IllegalMonitorStateError(`lock "${this.name}" is not held by the current task`);
    }
    runtime.assertOpen();
    await runtime.holds.serialize(this.keys.lock, owner, async () => {
      if (!hold.active) {
        runtime.holds.dropOne(hold);
        throw hold.lostError;
      }
      if (hold.count > 1) {
        // Nested: the masters never saw it.
        hold.releasedOne();
        return;
      }
      await this.finalRelease(hold);
    });
  }

  /**
   * The last release of a hold, on every master. Once it went out there is no
   * way back: a release that timed out may still run, so the hold is released
   * (a majority confirmed), or lost. What is left on the masters is released
   * in the background (see MasterSet.release).
   * @throws LockLostError when the hold was lost before or during the release
   * @throws QuorumError when failures leave it undecided: the hold is then lost
   *   (`unreachable`: its signal aborts, `lockLost`), since fewer than a
   *   majority can be counted on to still have it
   */
  private async finalRelease(hold: RedlockHold): Promise<void> {
    const { runtime } = this;
    hold.beginFinalRelease();
    let result: ReleaseResult;
    try {
      result = await runtime.masters.release(hold);
    } catch (error) {
      // Whether anything went out is unknown: the hold can no longer be counted on.
      hold.lose('unreachable', error);
      runtime.holds.dropOne(hold);
      throw error;
    }
    if (!hold.active) {
      // Lost while the release was out (its fixed lease ran out, a forceUnlock):
      // the holder must hear of it, whatever the masters answered.
      runtime.holds.dropOne(hold);
      throw hold.lostError;
    }
    if (result.outcome === 'released') {
      hold.releasedOne();
      runtime.holds.remove(hold);
      runtime.released(hold);
      return;
    }
    if (result.outcome === 'lost') {
      hold.lose(result.reason);
      runtime.holds.dropOne(hold);
      throw hold.lostError;
    }
    // Undecided: it is released on some masters and maybe on the ones that did
    // not answer (a timed-out release may still run), so fewer than a majority
    // can be counted on to still have it. Standing on would let this owner, and
    // its nested acquisitions, believe it holds a lock another client can take.
    hold.lose('unreachable', result.error);
    runtime.holds.dropOne(hold);
    throw result.error;
  }

  // ---- helpers -----------------------------------------------------------
}
