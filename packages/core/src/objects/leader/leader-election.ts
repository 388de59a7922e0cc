import { EventEmitter } from 'eventemitter3';
import { backoffDelayMs } from '../../engine/backoff.js';
import { sleepFor } from '../../connection/time.js';
import { LockLostError, RedisUnavailableError } from '../../errors.js';
import { checkFunction, checkKnownKeys, checkOptionsObject, checkSignal } from '../../checks/argument-checks.js';
import { newTaskContext, ownerId, runInTask } from '../../tasks/task-context.js';
import type { LockHandle, RLock } from '../lock/types.js';
import type { ElectOptions, LeadOptions, LeaderElectionEvents, LeaderInfo, Leadership, LeadershipEvent, LeadershipScope } from './types.js';

/** Backoff of `lead()` while Redis is out of reach, from MIN_RETRY_MS up to MAX_RETRY_MS. */
const MIN_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;

/**
 * Leader election (Curator's LeaderLatch) on the lock `name` (use it for nothing else) under a watchdog lease. The epoch
 * is the hold's fencing token: a leader stalled past its lease is replaced by a larger epoch, so fence writes with it.
 *
 * @example
 * const election = client.getLeaderElection('scheduler');
 * election.on('lost', ({ reason }) => log.warn(`no longer leader: ${reason}`));
 * await election.lead(async ({ signal, epoch }) => {
 *   while (!signal.aborted) await runScheduledJobs({ signal, fence: epoch });
 * }, { signal: shutdown.signal });
 */
export class LeaderElection extends EventEmitter<LeaderElectionEvents> {
  constructor(
    /** The election's name (the lock's). */
    readonly name: string,
    private readonly clientId: string,
    private readonly lock: RLock<string>,
    private readonly readLeader: () => Promise<LeaderInfo | undefined>,
  ) {
    super();
  }

  /**
   * Waits (up to `waitMs`) until elected and returns the term; each call is its own candidate, even in one process.
   * @throws InvalidArgumentError for a bad option, before any command
   * @throws LockAcquireTimeoutError when `waitMs` ran out
   * @throws the signal's reason when it aborts; ClientClosedError once the client closed
   */
  async elect(options?: ElectOptions): Promise<Leadership> {
    const raw = checkOptionsObject(options, 'elect() options');
    checkKnownKeys(raw, ['waitMs', 'signal'], 'elect() options');
    const task = newTaskContext();
    // Inside a task of its own, so the hold is this candidate's and its owner id known.
    const handle = await runInTask(task, () => this.lock.acquire(raw as ElectOptions));
    const term = new Term(this, ownerId(this.clientId, task), handle);
    this.emitSafely('elected', term.event);
    term.watch();
    return term;
  }

  /**
   * Runs `fn` for each term won, then campaigns again, until `options.signal` aborts; Redis out of reach is retried with backoff.
   * @throws InvalidArgumentError for a bad argument, before any command
   * @throws the signal's reason once it aborts (the normal way to stop)
   * @throws what `fn` threw while still leading (leadership is given up first)
   * @throws ClientClosedError once the client closed
   */
  async lead(fn: (scope: LeadershipScope) => unknown, options?: LeadOptions): Promise<void> {
    checkFunction(fn, 'lead(fn)');
    const raw = checkOptionsObject(options, 'lead() options');
    checkKnownKeys(raw, ['signal'], 'lead() options');
    const signal = checkSignal(raw.signal, 'lead(): signal');
    let failures = 0;
    for (;;) {
      signal?.throwIfAborted();
      let term: Leadership;
      try {
        term = await this.elect(signal ? { signal } : {});
        failures = 0;
      } catch (error) {
        if (!(error instanceof RedisUnavailableError) || signal?.aborted) throw error;
        await sleepFor(backoffDelayMs(++failures, MIN_RETRY_MS, MAX_RETRY_MS, Math.random()), signal);
        continue;
      }
      const scopeSignal = signal ? AbortSignal.any([term.signal, signal]) : term.signal;
      try {
        await fn({ signal: scopeSignal, epoch: term.epoch });
      } catch (error) {
        // After the term's signal aborted an error just ends the term; else it is the caller's, once leadership is given up.
        if (!scopeSignal.aborted) throw error;
      } finally {
        await term.resign().catch(() => undefined);
      }
    }
  }

  /**
   * The leader as Redis has it now (any process's), or undefined.
   * @throws RedisUnavailableError, RedisCommandError; ClientClosedError once the client closed
   */
  currentLeader(): Promise<LeaderInfo | undefined> {
    return this.readLeader();
  }

  /** @internal Emits without letting a throwing listener escape (abort handlers, releases). */
  emitSafely(event: 'elected' | 'resigned' | 'lost', payload: Parameters<LeaderElectionEvents['lost']>[0] | LeadershipEvent): void {
    try {
      (this.emit as (event: string, payload: unknown) => boolean)(event, payload);
    } catch (listenerError) {
      try {
        this.emit('error', listenerError instanceof Error ? listenerError : new Error(String(listenerError)));
      } catch {
        // An error listener that throws has nowhere left to report to.
      }
    }
  }
}

class Term implements Leadership {
  readonly name: string;
  readonly epoch: string;
  readonly signal: AbortSignal;
  private resigning: Promise<void> | undefined;

  constructor(
    private readonly election: LeaderElection,
    readonly owner: string,
    private readonly handle: LockHandle<string>,
  ) {
    this.name = election.name;
    this.epoch = handle.token;
    this.signal = handle.signal;
  }

  get isLeader(): boolean {
    return this.resigning === undefined && !this.signal.aborted;
  }

  get event(): LeadershipEvent {
    return { name: this.name, owner: this.owner, epoch: this.epoch };
  }

  /** Reports the loss of this term as a `lost` event (a resignation is reported as such). */
  watch(): void {
    const signal = this.signal;
    const onAbort = (): void => {
      if (this.resigning !== undefined) return;
      const error = signal.reason instanceof LockLostError ? signal.reason : new LockLostError(this.name, 'expired', { cause: signal.reason });
      this.election.emitSafely('lost', { ...this.event, reason: error.reason, error });
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  }

  resign(): Promise<void> {
    return (this.resigning ??= this.release());
  }

  private async release(): Promise<void> {
    try {
      await this.handle.unlock();
    } catch (error) {
      // Lost already: nothing to give up (the loss was reported as such).
      if (error instanceof LockLostError) return;
      // Given up all the same: the client finishes the release in the background.
      this.election.emitSafely('resigned', this.event);
      throw error;
    }
    this.election.emitSafely('resigned', this.event);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.resign();
  }
}
