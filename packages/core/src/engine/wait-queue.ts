import { ClientClosedError } from '../errors.js';
import { monotonicNow, sleepFor } from '../connection/time.js';
import type { WaitWatch } from '../observability/telemetry.js';
import { onAbort } from '../tasks/abort-fan-out.js';

/** How long a client that released while other clients wait holds back its own waiters, ms (see {@link WaitQueue.yieldFor}). */
const HANDOFF_YIELD_MS = 2;

/** Calls queued behind this process's waiters that set out in one turn of the event loop: the rest wait for the next turn. */
export const ARRIVALS_PER_TURN = 256;

export type WakeReason = 'released' | 'timeout' | 'resubscribed' | 'turn';

/** One task waiting on an object: it sleeps only between tries, woken as the object's wake policy says. */
export class Waiter {
  /** Woken by a release: a waiter that then leaves without acquiring passes the wake on. */
  woken = false;
  /** Woken by the queue's shared timed retry: its try stands for every waiter sharing it (see {@link WaitQueue.retryIn}). */
  timed = false;
  /** Observability's view of the call waiting here (waiters.active, whether an acquisition waited). */
  watch: WaitWatch | undefined;
  /** A grant a script's reply handed this waiter as it slept (see {@link WaitQueue.handTo}): its loop takes it instead of trying. */
  handOff: unknown = undefined;
  private wake: ((reason: WakeReason) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly queue: WaitQueue,
    /** Who waits: the owner, or an id the object's messages name. */
    readonly id: string,
    /**
     * Sleeps without a timed try of its own: the queue's one timer wakes one sharing waiter at a time. False where the waiter's
     * own tries keep its place in Redis (a fair lock's queue, a writer's waiter lease), and in a head-only queue (turns instead).
     */
    readonly sharesRetry = false,
  ) {}

  get sleeping(): boolean {
    return this.wake !== undefined;
  }

  get isHead(): boolean {
    return this.queue.waiters[0] === this;
  }

  /** Rejects when `signal` aborts. A wake that came while this waiter was trying was kept, and is taken here (head-only: by the head). */
  sleep(timeoutMs: number, signal: AbortSignal | undefined): Promise<WakeReason> {
    if (((!this.queue.headOnly || this.isHead) && this.queue.takePendingWake()) || this.queue.takePendingId(this.id)) {
      this.woken = true;
      return Promise.resolve('released');
    }
    return new Promise<WakeReason>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const aborted = (): void => {
        this.settle();
        reject(signal?.reason);
      };
      const stopListening = signal ? onAbort(signal, aborted) : undefined;
      if (Number.isFinite(timeoutMs)) this.timer = setTimeout(() => this.fire('timeout'), Math.max(1, Math.ceil(timeoutMs)));
      this.wake = (reason) => {
        stopListening?.();
        resolve(reason);
      };
      if (this.queue.closedError) this.fire('timeout');
    });
  }

  fire(reason: WakeReason): void {
    const wake = this.wake;
    if (!wake) return;
    this.settle();
    if (reason === 'released') this.woken = true;
    wake(reason);
  }

  private settle(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.wake = undefined;
  }
}

/**
 * The local waiters of one channel, in arrival order. In a head-only queue only the head tries (Redlock: a process's
 * own tasks would split the votes); the others wait for their turn.
 */
export class WaitQueue {
  readonly waiters: Waiter[] = [];
  /** How many waiters here have each id: more than one are branches of one task (see {@link WaitQueues.wakeSiblings}). */
  readonly idCounts = new Map<string, number>();
  /** Wakes that found no sleeper: the next sleepers take them at once. */
  pendingWakes = 0;
  /** Wakes by id that found their waiter busy trying: its next sleep returns at once. */
  private readonly pendingIds = new Set<string>();
  closedError: Error | undefined;
  /** Passes a wake none of this client's waiters can use on to another client; absent where every client hears every wake. */
  unheard: (() => void) | undefined;
  /** Settles once the queue's channel is subscribed (acknowledged): a try after it cannot miss a release. */
  ready: Promise<void> | undefined;
  subscribed = false;
  /** Until then (monotonic ms) a release wakes no local waiter: other clients' waiters go first. */
  private yieldUntil = 0;
  private yieldTimer: NodeJS.Timeout | undefined;
  /** The one timed retry of the waiters that share it: N local waiters cost Redis what one does. */
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly channel: string,
    readonly headOnly: boolean,
    /** The object's wake policy: what a message on the channel wakes; false when the message is not one of the object's (dropped). */
    readonly onMessage: (payload: string, queue: WaitQueue) => boolean,
    private readonly drops: MessageDrops = { count: 0 },
  ) {}

  /**
   * The next timed try of the sharing waiters is due in `ms` (from the latest answer: it replaces the one before). It wakes the
   * first sharing waiter asleep; one busy trying re-arms it with its answer, or leaves (see {@link WaitQueues.leave}).
   */
  retryIn(ms: number): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(this.onRetry, Math.max(1, Math.ceil(ms)));
  }

  /** True while the shared timed retry is armed. */
  get retryArmed(): boolean {
    return this.retryTimer !== undefined;
  }

  stopRetry(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  private readonly onRetry = (): void => {
    this.retryTimer = undefined;
    const sleeper = this.waiters.find((waiter) => waiter.sharesRetry && waiter.sleeping);
    if (!sleeper) return;
    sleeper.timed = true;
    sleeper.fire('timeout');
  };

  /** A message on the channel: what the object's policy wakes; one it does not recognise is dropped and counted, never thrown. */
  hear(payload: string): void {
    let understood: boolean;
    try {
      understood = this.onMessage(payload, this);
    } catch {
      understood = false;
    }
    if (!understood) this.drop();
  }

  /** Counts a message on the channel that was not one of the object's. */
  drop(): void {
    this.drops.count++;
  }

  takePendingWake(): boolean {
    if (this.pendingWakes === 0) return false;
    this.pendingWakes--;
    return true;
  }

  /** Wakes the longest-waiting sleeper (the head, in a head-only queue); with none asleep, keeps the wake for the next. */
  wakeOne(): void {
    if (this.waiters.length === 0) {
      this.unheard?.();
      return;
    }
    const sleeper = this.headOnly ? (this.waiters[0]?.sleeping ? this.waiters[0] : undefined) : this.waiters.find((w) => w.sleeping);
    if (sleeper) sleeper.fire('released');
    else if (this.pendingWakes < this.waiters.length) this.pendingWakes++;
  }

  /** Wakes up to `n` waiters, longest-waiting first. */
  wakeN(n: number): void {
    for (let i = 0; i < n; i++) this.wakeOne();
  }

  /** Wakes the waiter `id`; one busy trying finds the wake at its next sleep. */
  wakeId(id: string): void {
    const waiter = this.waiters.find((candidate) => candidate.id === id);
    if (!waiter) return;
    if (waiter.sleeping) waiter.fire('released');
    else this.pendingIds.add(id);
  }

  /**
   * Wakes the waiter `id` with a grant a script's reply told this client (the grant is Redis's, so no message carries it);
   * one busy trying gets only a wake: what it tried may predate the grant, and its next try claims it.
   */
  handTo(id: string, handOff: unknown): void {
    const sleeper = this.waiters.find((candidate) => candidate.id === id && candidate.sleeping);
    if (!sleeper) {
      this.wakeId(id);
      return;
    }
    sleeper.handOff = handOff;
    sleeper.fire('released');
  }

  /** A wake kept for `id` is nobody's once no waiter with that id is left. */
  forgetPendingId(id: string): void {
    if (this.pendingIds.has(id) && !this.waiters.some((waiter) => waiter.id === id)) this.pendingIds.delete(id);
  }

  /** A wake kept for `id` goes to a sleeping waiter with that id now, if there is one. */
  passPendingId(id: string): void {
    if (!this.pendingIds.has(id)) return;
    const sleeper = this.waiters.find((waiter) => waiter.id === id && waiter.sleeping);
    if (!sleeper) return;
    this.pendingIds.delete(id);
    sleeper.fire('released');
  }

  takePendingId(id: string): boolean {
    return this.pendingIds.size > 0 && this.pendingIds.delete(id);
  }

  /** A waiter busy trying gets a pending wake instead: what it tried may predate the event. */
  wakeAll(reason: WakeReason): void {
    let busy = 0;
    for (const waiter of this.waiters) {
      if (waiter.sleeping) waiter.fire(reason);
      else busy++;
    }
    this.pendingWakes = Math.min(this.waiters.length, this.pendingWakes + busy);
  }

  /** A release was announced: wake one waiter now, or once this client's turn to yield is over. */
  released(): void {
    const wait = this.yieldLeftMs();
    if (wait <= 0) this.wakeOne();
    else this.wakeAfterYield(wait, () => this.wakeOne());
  }

  /** This client released while others wait: hold back local wakes for `ms`, or its awake loop would win far more than its share. */
  yieldFor(ms = HANDOFF_YIELD_MS): void {
    this.yieldUntil = monotonicNow() + ms;
  }

  /** How long this client still holds its waiters back, ms (≤ 0: it does not). */
  yieldLeftMs(): number {
    return this.yieldUntil - monotonicNow();
  }

  /** A wake held back by the yield is due (see {@link wakeAfterYield}). */
  get wakeHeldBack(): boolean {
    return this.yieldTimer !== undefined;
  }

  /** Runs `wake` in `waitMs` (the rest of the yield), unless a held-back wake is due already: that one serves both. */
  wakeAfterYield(waitMs: number, wake: () => void): void {
    if (this.yieldTimer) return;
    this.yieldTimer = setTimeout(
      () => {
        this.yieldTimer = undefined;
        wake();
      },
      Math.max(1, Math.ceil(waitMs)),
    );
    this.yieldTimer.unref();
  }
}

/** A call deferred by {@link WaitQueues.later}; `resolve` is cleared once it set out. */
type Deferred = { readonly channel: string; readonly deadline: number; resolve: (() => void) | undefined; stop: (() => void) | undefined };

/** Messages a client's queues dropped (not one of their object's): shared by its queues, read by operators. */
export interface MessageDrops {
  count: number;
}

/** How a queue's channel is subscribed: resolves once acknowledged; closed when the queue empties. */
export interface QueueSubscription {
  readonly ready: Promise<void>;
  close(): void;
}

/** How a new waiter joins: who it is, and the queue's policy if it is the first. */
export interface JoinSpec {
  readonly channel: string;
  readonly id: string;
  readonly headOnly: boolean;
  readonly onMessage: (payload: string, queue: WaitQueue) => boolean;
  /** Its tries keep a place in Redis (a waiter lease): it keeps a timed try of its own instead of sharing the queue's. */
  readonly keepsPlace?: boolean | undefined;
}

/**
 * A client's wait queues by channel, subscribed while a local task waits. Every try before a sleep follows the subscription's
 * acknowledgement, so no later release is missed; after a reconnect every waiter tries again: messages meanwhile are gone.
 */
export class WaitQueues {
  private readonly queues = new Map<string, WaitQueue>();
  private readonly subscriptions = new Map<WaitQueue, QueueSubscription>();
  /** First tries out now, by channel, that later arrivals queue behind (WaitSpec.queuesOthers). */
  private readonly arrivals = new Map<string, number>();
  /** Calls that arrived behind this process's waiters and have not set out yet, in arrival order (see {@link later}). */
  private readonly deferred: Deferred[] = [];
  /** Deferred calls by channel: a newcomer queues behind them too. */
  private readonly deferredOn = new Map<string, number>();
  /** Calls queued behind waiters that set out at once in this turn (see {@link setsOutNow}). */
  private setOutThisTurn = 0;
  private turnEnds: NodeJS.Immediate | undefined;
  private closedError: Error | undefined;
  /** How to end each sleep outside any queue (a back-off waiter's) when the client closes. */
  private readonly apart = new Set<AbortController>();
  /** Messages on the queues' channels that were dropped as malformed or unknown. */
  readonly drops: MessageDrops = { count: 0 };

  constructor(private readonly subscribe: (queue: WaitQueue) => QueueSubscription) {}

  get(channel: string): WaitQueue | undefined {
    return this.queues.get(channel);
  }

  /** True when `channel` is subscribed (acknowledged) for waiters already here: a newcomer joining now hears every later announcement. */
  isSubscribed(channel: string): boolean {
    return this.queues.get(channel)?.subscribed === true;
  }

  /**
   * True when local tasks already wait on `channel` (joined, or deferred by {@link later}), or a first try that queues others
   * is out on it: a newcomer then queues behind them.
   */
  hasWaiters(channel: string): boolean {
    return this.hasJoined(channel) || (this.deferredOn.size > 0 && this.deferredOn.has(channel));
  }

  /** {@link hasWaiters}, leaving out the calls still deferred: what a deferred call finds ahead of it as it sets out. */
  hasJoined(channel: string): boolean {
    return (this.queues.get(channel)?.waiters.length ?? 0) > 0 || (this.arrivals.size > 0 && this.arrivals.has(channel));
  }

  /**
   * True when a call queued behind this process's waiters on `channel` may set out at once: none is deferred (they keep
   * arrival order), fewer than ARRIVALS_PER_TURN did this turn, and the channel's SUBSCRIBE is not pending (the call could
   * only wait for it: it waits a turn off this one instead). A call queued under contention thus costs no extra turn; a
   * burst of thousands made in one turn still joins over several.
   */
  setsOutNow(channel: string): boolean {
    if (this.deferred.length > 0 || this.setOutThisTurn >= ARRIVALS_PER_TURN || this.queues.get(channel)?.subscribed === false) return false;
    this.setOutThisTurn++;
    this.turnEnds ??= setImmediate(this.endTurn);
    return true;
  }

  /**
   * Settles when `call` (a WaitCall queued behind this process's waiters on `channel`) may set out: after the calls deferred
   * before it, within ARRIVALS_PER_TURN a turn (those that set out at once count), so a burst made in one turn joins over
   * several. One aborted meanwhile sets out at once, one out of time as a turn ends (and ends as every call does); until then
   * it holds no timer or listener of its own beyond one on its caller's signal.
   */
  later(channel: string, call: { readonly deadline: number; readonly callerSignal: AbortSignal | undefined }): Promise<void> {
    return new Promise((resolve) => {
      const entry: Deferred = { channel, deadline: call.deadline, resolve, stop: undefined };
      this.deferred.push(entry);
      this.deferredOn.set(channel, (this.deferredOn.get(channel) ?? 0) + 1);
      this.turnEnds ??= setImmediate(this.endTurn);
      const signal = call.callerSignal;
      if (signal?.aborted) this.setOut(entry);
      else if (signal) entry.stop = onAbort(signal, () => this.setOut(entry));
    });
  }

  private readonly endTurn = (): void => {
    this.turnEnds = undefined;
    // Out of time meanwhile: it sets out now, ahead of its turn, and ends at once.
    const now = monotonicNow();
    for (const entry of this.deferred) if (entry.deadline <= now) this.setOut(entry);
    const room = ARRIVALS_PER_TURN - this.setOutThisTurn;
    this.setOutThisTurn = 0;
    for (const entry of this.deferred.splice(0, room)) this.setOut(entry);
    if (this.deferred.length > 0) this.turnEnds = setImmediate(this.endTurn);
  };

  /** Lets `entry` set out, unless it did already (aborted, or out of time). */
  private setOut(entry: Deferred): void {
    const resolve = entry.resolve;
    if (!resolve) return;
    entry.resolve = undefined;
    entry.stop?.();
    const left = (this.deferredOn.get(entry.channel) ?? 1) - 1;
    if (left > 0) this.deferredOn.set(entry.channel, left);
    else this.deferredOn.delete(entry.channel);
    resolve();
  }

  /** A first try on `channel` that later arrivals queue behind is out. */
  arrive(channel: string): void {
    this.arrivals.set(channel, (this.arrivals.get(channel) ?? 0) + 1);
  }

  /** That try answered; `wake`: it failed, so a waiter that queued behind it tries now. */
  arrived(channel: string, wake: boolean): void {
    const left = (this.arrivals.get(channel) ?? 1) - 1;
    if (left > 0) this.arrivals.set(channel, left);
    else this.arrivals.delete(channel);
    const queue = this.queues.get(channel);
    if (wake && queue && queue.waiters.length > 0) queue.wakeOne();
  }

  /**
   * Resolves once the subscription is acknowledged; `entered` hears the waiter as soon as it is queued, so a caller cut off can take
   * it out; `front`: it arrived before every waiter here (they queued behind its first try); `watch` is told when it joins and leaves.
   */
  async join(spec: JoinSpec, entered?: (waiter: Waiter) => void, front = false, watch?: WaitWatch): Promise<Waiter> {
    if (this.closedError) throw this.closedError;
    const queue = this.queues.get(spec.channel) ?? new WaitQueue(spec.channel, spec.headOnly, spec.onMessage, this.drops);
    this.queues.set(spec.channel, queue);
    const waiter = new Waiter(queue, spec.id, !queue.headOnly && spec.keepsPlace !== true);
    if (front) queue.waiters.unshift(waiter);
    else queue.waiters.push(waiter);
    queue.idCounts.set(spec.id, (queue.idCounts.get(spec.id) ?? 0) + 1);
    waiter.watch = watch;
    watch?.joined();
    entered?.(waiter);
    try {
      if (!queue.ready) {
        const subscription = this.subscribe(queue);
        this.subscriptions.set(queue, subscription);
        queue.ready = subscription.ready.then(
          () => void (queue.subscribed = true),
          (error: unknown) => {
            // The next joiner subscribes afresh rather than inherit a failure.
            if (this.queues.get(queue.channel) === queue) queue.ready = undefined;
            this.subscriptions.delete(queue);
            subscription.close();
            throw error;
          },
        );
      }
      await queue.ready;
    } catch (error) {
      this.leave(waiter, false);
      throw error;
    }
    return waiter;
  }

  /** Wakes the other sleeping waiters with the same id: branches of one task can reenter now. */
  wakeSiblings(acquirer: Waiter): void {
    // Looked up, not searched: a grant to one of 10,000 waiters must not cost a pass over them all.
    if ((acquirer.queue.idCounts.get(acquirer.id) ?? 0) < 2) return;
    for (const waiter of acquirer.queue.waiters) {
      if (waiter !== acquirer && waiter.id === acquirer.id) waiter.fire('released');
    }
  }

  /** A waiter woken by a release that leaves without it passes the wake on; a head that leaves gives the next its turn. */
  leave(waiter: Waiter, acquired: boolean): void {
    const queue = waiter.queue;
    const index = queue.waiters.indexOf(waiter);
    if (index === -1) return;
    // Mostly the head: shift() drops it in place, where splice() copies every waiter behind it.
    if (index === 0) queue.waiters.shift();
    else queue.waiters.splice(index, 1);
    const sameId = (queue.idCounts.get(waiter.id) ?? 1) - 1;
    if (sameId > 0) queue.idCounts.set(waiter.id, sameId);
    else queue.idCounts.delete(waiter.id);
    waiter.watch?.left();
    waiter.fire('timeout');
    queue.forgetPendingId(waiter.id);
    // A wake kept for this id goes to a branch of the same task still waiting.
    if (!acquired) queue.passPendingId(waiter.id);
    if (waiter.woken && !acquired) queue.wakeOne();
    // The last waiter leaves with a wake kept for it unused: the wake is another client's now.
    else if (!acquired && queue.waiters.length === 0 && queue.takePendingWake()) queue.unheard?.();
    if (index === 0 && queue.headOnly) queue.waiters[0]?.fire('turn');
    // It may have been the one the shared timer woke: the next sharing waiter tries now rather than never.
    if (waiter.sharesRetry && !acquired && !queue.retryArmed && queue.waiters.length > 0) queue.retryIn(0);
    if (queue.waiters.length === 0) queue.stopRetry();
    if (queue.waiters.length === 0 && this.queues.get(queue.channel) === queue) {
      this.queues.delete(queue.channel);
      const subscription = this.subscriptions.get(queue);
      this.subscriptions.delete(queue);
      if (subscription)
        queue.ready?.then(
          () => subscription.close(),
          () => undefined,
        );
    }
  }

  /** After a reconnect: every waiter tries again. */
  wakeAll(reason: WakeReason): void {
    for (const queue of this.queues.values()) queue.wakeAll(reason);
  }

  /**
   * Sleeps `ms` outside any queue (a waiter that subscribes to nothing): rejects when `signal` aborts, and with the close's
   * error when the client closes, as a queued waiter is.
   */
  sleepApart(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (this.closedError) return Promise.reject(this.closedError);
    const sleep = new AbortController();
    const stopListening = signal ? onAbort(signal, () => sleep.abort(signal.reason)) : undefined;
    if (signal?.aborted) sleep.abort(signal.reason);
    this.apart.add(sleep);
    return sleepFor(ms, sleep.signal).finally(() => {
      stopListening?.();
      this.apart.delete(sleep);
    });
  }

  /** Rejects every waiter with `error` (those sleeping apart too), and every later join. */
  close(error: Error = new ClientClosedError()): void {
    this.closedError = error;
    for (const sleep of this.apart) sleep.abort(error);
    for (const queue of this.queues.values()) {
      queue.closedError = error;
      queue.stopRetry();
      queue.wakeAll('timeout');
    }
    this.queues.clear();
    for (const subscription of this.subscriptions.values()) subscription.close();
    this.subscriptions.clear();
  }
}
