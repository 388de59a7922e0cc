import { EventEmitter } from 'eventemitter3';
import { nanoid } from 'nanoid';
import {
  ClientClosedError,
  checkFunction,
  checkLockName,
  runInTaskOrNew,
  type CloseReport,
  type LeaseRenewer,
  type LockLostError,
  type RLock,
  type RLockClientEvents,
} from '@org/rlock-core';
import { HoldTable } from './hold-table.js';
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
export class RedlockClient extends EventEmitter<RLockClientEvents> {
  /** Unguessable id of this client: the first half of every owner id. */
  readonly clientId = nanoid();
  readonly options: ResolvedRedlockOptions;
  /** Votes a round needs: ⌊N/2⌋ + 1. */
  readonly quorum: number;
  private readonly masterList: readonly Master[];
  private readonly masters: MasterSet;
  private readonly announcements: ReleaseAnnouncements;
  private readonly holds = new HoldTable();
  private readonly renewer: LeaseRenewer | undefined;
  private readonly runtime: RedlockRuntime;
  private closing: Promise<CloseReport> | undefined;

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
    const report = (error: Error): void => {
      this.emit('error', error);
    };
    this.masters = new MasterSet(created, driftFactor, report);
    this.quorum = this.masters.quorum;
    this.announcements = new ReleaseAnnouncements(created, commandTimeoutMs, toleratedFailures(created.length) + 1, report);
    this.renewer = this.options.renewer?.(new RedlockRenewal(this.masters, driftFactor), {
      renewed: (count) => this.emit('lockRenewed', { count }),
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
   * Runs `fn` in a new task (the Node.js counterpart of a Java thread), or in the
   * current one when called inside a task. Locks taken in it belong to the task.
   */
  task<T>(fn: () => T | Promise<T>): Promise<T> {
    checkFunction(fn, 'task(fn)');
    return runInTaskOrNew(async () => fn());
  }

  /**
   * Rejects waiters with ClientClosedError, stops renewal, aborts the signals of
   * the holds still held (reason `closed`), releases them on every master
   * best-effort (bounded by commandTimeoutMs), and closes the connections it
   * created. Leaves the ioredis instances it was given open. Idempotent.
   */
  close(): Promise<CloseReport> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<CloseReport> {
    this.announcements.close(new ClientClosedError());
    await this.renewer?.close();
    const holds = this.holds.all().filter((hold) => hold.active);
    const report: CloseReport = { released: [], failed: [] };
    await Promise.all(
      holds.map(async (hold) => {
        hold.lose('closed');
        try {
          (await this.masters.releaseOnClose(hold) ? report.released : report.failed).push(hold.name);
        } catch {
          report.failed.push(hold.name);
        }
      }),
    );
    await Promise.all(this.masterList.map((master) => master.close(this.options.commandTimeoutMs)));
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
        return client.closing !== undefined;
      },
      assertOpen: () => {
        if (this.closing) throw new ClientClosedError();
      },
      acquired: (hold) => this.emit('lockAcquired', { name: hold.name, owner: hold.owner, token: undefined, count: hold.count }),
      released: (hold) => this.emit('lockReleased', { name: hold.name, owner: hold.owner, token: undefined }),
      backgroundError: (error) => this.emit('error', error instanceof Error ? error : new Error(String(error))),
    };
  }

  private onLost(hold: RedlockHold, error: LockLostError): void {
    this.emit('lockLost', { name: hold.name, owner: hold.owner, token: undefined, reason: error.reason, error });
    // What is left of the hold on the masters (token-checked, so never a newer
    // hold) is cleared at once, so waiters need not sit out its TTL.
    if (error.reason !== 'closed' && error.reason !== 'forced' && !this.closing) this.masters.sweep(hold);
  }
}
