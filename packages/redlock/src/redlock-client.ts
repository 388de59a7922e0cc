import { nanoid } from 'nanoid';
import {
  HoldRegistry,
  LockClientBase,
  ClientClosedError,
  checkLockName,
  type CloseReport,
  type LeaseRenewer,
  type LockLostError,
  monotonicNow,
  type RLock,
} from '@org/rlock-core';
import { Master } from './master.js';
import { MasterSet } from './master-set.js';
import { toleratedFailures } from './quorum.js';
import { RedlockLock } from './redlock-lock.js';
import { resolveRedlockOptions, type RedlockClientOptions, type ResolvedRedlockOptions } from './redlock-options.js';
import type { RedlockHold, RedlockHoldObserver } from './redlock-hold.js';
import { RedlockRenewal } from './redlock-renewal.js';
import type { RedlockRuntime } from './redlock-runtime.js';
import { ReleaseAnnouncements } from './release-announcements.js';

/**
 * A Redlock client: the reentrant lock composed across N independent Redis
 * masters with a majority quorum. Its locks have the same `RLock` interface,
 * task semantics and events as the single-server client; they run core's
 * scripts unchanged on every master, with the same key names everywhere.
 *
 * @example
 * const redlock = new RedlockClient({ masters: [url1, url2, url3], renewer: createWatchdog() });
 * await redlock.getLock('report:daily').withLock(async ({ signal }) => { … });
 * await redlock.close();
 */
export class RedlockClient extends LockClientBase {
  /** Unguessable id of this client: the first half of every owner id. */
  readonly clientId = nanoid();
  readonly options: ResolvedRedlockOptions;
  /** Votes a round needs: ⌊N/2⌋ + 1. */
  readonly quorum: number;
  private readonly masterList: readonly Master[];
  private readonly masters: MasterSet;
  private readonly announcements: ReleaseAnnouncements;
  private readonly holds = new HoldRegistry<RedlockHold>();
  private readonly renewer: LeaseRenewer | undefined;
  private readonly runtime: RedlockRuntime;
  /** Rounds in flight: close waits for them, so a grant that comes after close began is undone before QUIT. */
  private readonly rounds = new Set<Promise<unknown>>();

  /** @throws InvalidArgumentError listing every bad option, before connecting. */
  constructor(options: RedlockClientOptions) {
    super();
    this.options = resolveRedlockOptions(options, 'RedlockClient');
    const { commandTimeoutMs, perNodeTimeoutMs, driftFactor, watchdogTimeoutMs } = this.options;
    const created: Master[] = [];
    try {
      this.options.masters.forEach((input, index) => {
        created.push(new Master(index, this.options.masterNames[index] as string, input, perNodeTimeoutMs, commandTimeoutMs));
      });
    } catch (error) {
      for (const master of created) if (master.owned) master.redis.disconnect();
      throw error;
    }
    this.masterList = created;
    const report = (error: Error): void => this.reportError(error);
    this.masters = new MasterSet(created, driftFactor, commandTimeoutMs, report);
    this.quorum = this.masters.quorum;
    this.announcements = new ReleaseAnnouncements(created, commandTimeoutMs, toleratedFailures(created.length) + 1, report);
    this.renewer = this.options.renewer?.(new RedlockRenewal(this.masters, driftFactor), {
      renewed: (count) => this.emitSafely('lockRenewed', { count }),
      error: report,
    });
    this.runtime = this.makeRuntime(Math.max(1, Math.floor(watchdogTimeoutMs / 3)));
  }

  /** Printable names of the masters, in order (URLs without credentials, or host:port). */
  get masterNames(): readonly string[] {
    return this.options.masterNames;
  }

  /**
   * The reentrant Redlock lock `name`.
   * @throws InvalidArgumentError (synchronously) for an empty name, one over 1,024 bytes, or one with braces.
   */
  getLock(name: string): RLock {
    return new RedlockLock(checkLockName(name), this.runtime);
  }

  /**
   * Rejects waiters with ClientClosedError, stops renewal, aborts the signals of
   * the holds still held (reason `closed`), releases them on every master
   * best-effort, and closes the connections it created; all of it within one
   * deadline of commandTimeoutMs (a frozen master does not make it wait longer).
   * Rounds in flight are waited for first, so their grants are undone before
   * the connections quit. Leaves the ioredis instances it was given open.
   * Idempotent.
   */
  protected async shutdown(): Promise<CloseReport> {
    // One deadline for everything: a frozen master must not make close wait
    // once per step (renewal drain, releases, QUIT).
    const deadline = monotonicNow() + this.options.commandTimeoutMs;
    this.announcements.close(new ClientClosedError());
    // Stops every renewal at once. One already sent cannot recreate a released
    // key (the renew script never creates one), so releases need not wait for it.
    const renewalStopped = this.renewer?.close();
    this.masters.stopBackground();
    // A round in flight undoes a grant that comes after close began. Each is bounded.
    await untilDeadline(Promise.allSettled([...this.rounds]), deadline);
    const holds = this.holds.all().filter((hold) => hold.active);
    const report: CloseReport = { released: [], failed: [] };
    await Promise.all(
      holds.map(async (hold) => {
        hold.lose('closed');
        hold.beginFinalRelease();
        const outcome = await untilDeadline(
          this.masters.release(hold).then(
            (result) => result.outcome,
            () => undefined,
          ),
          deadline,
        );
        (outcome === 'released' ? report.released : report.failed).push(hold.name);
      }),
    );
    // Cancels and releases still running (to a master that has not answered)
    // get until the deadline. QUIT only goes after them: ioredis sends it at
    // once, ahead of commands still waiting in an auto-pipeline batch.
    await untilDeadline(this.masters.backgroundSettled(), deadline);
    await Promise.all(this.masterList.map((master) => master.close(deadline)));
    await untilDeadline(Promise.resolve(renewalStopped), deadline);
    return report;
  }

  private makeRuntime(maxSleepMs: number): RedlockRuntime {
    const client = this;
    const observer: RedlockHoldObserver = {
      startRenewal: (hold) => this.renewer?.add(hold),
      stopRenewal: (hold) => this.renewer?.remove(hold),
      lost: (hold, error) => this.onLost(hold, error),
    };
    return {
      clientId: this.clientId,
      keyPrefix: this.options.keyPrefix,
      watchdogTimeoutMs: this.options.watchdogTimeoutMs,
      driftFactor: this.options.driftFactor,
      retry: this.options.retry,
      maxSleepMs,
      unavailableAfterMs: this.options.commandTimeoutMs,
      canRenew: this.renewer !== undefined,
      masters: this.masters,
      announcements: this.announcements,
      holds: this.holds,
      holdObserver: observer,
      get closed() {
        return client.isClosing;
      },
      assertOpen: () => this.assertOpen(),
      inFlight: (round) => {
        const settled = round.then(
          () => undefined,
          () => undefined,
        );
        this.rounds.add(settled);
        void settled.then(() => this.rounds.delete(settled));
        return round;
      },
      // A listener that throws must not break the recording or release of a
      // hold (a hold recorded for a caller who then gets an error would leak).
      acquired: (hold) => this.emitSafely('lockAcquired', { name: hold.name, owner: hold.owner, token: undefined, count: hold.count }),
      released: (hold) => this.emitSafely('lockReleased', { name: hold.name, owner: hold.owner, token: undefined }),
      backgroundError: (error) => this.reportError(error),
    };
  }

  private onLost(hold: RedlockHold, error: LockLostError): void {
    this.emitSafely('lockLost', { name: hold.name, owner: hold.owner, token: undefined, reason: error.reason, error });
    // What is left of the hold on the masters (token-checked, so never a newer
    // hold) is cleared at once, so waiters need not sit out its TTL. A hold
    // whose final release went out is cleared by that release.
    if (error.reason !== 'closed' && error.reason !== 'forced' && !hold.releaseSent && !this.isClosing) this.masters.sweep(hold);
  }
}

/** Resolves with `work`'s value, or with undefined once the monotonic `deadline` passed. Never rejects if `work` does not. */
function untilDeadline<T>(work: Promise<T>, deadline: number): Promise<T | undefined> {
  const remainingMs = deadline - monotonicNow();
  if (remainingMs <= 0) return Promise.resolve(undefined);
  return new Promise<T | undefined>((resolve, reject) => {
    const timer = setTimeout(() => resolve(undefined), Math.ceil(remainingMs));
    timer.unref();
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
