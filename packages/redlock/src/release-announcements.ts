import { ClientClosedError } from '@org/rlock-core';
import type { Master } from './master.js';
import { MasterSubscriber } from './master-subscriber.js';

/** What a waiter saw of a lock's announcements before it sent a round. */
export interface AnnouncementSnapshot {
  /** Releases announced so far, per master. */
  readonly announced: readonly number[];
  /** Reconnects so far (any master). */
  readonly resubscribes: number;
}

/**
 * Left by a head that leaves its queue holding the lock, for the next head: it
 * need not send a round only to find its sibling holding the lock, and waits
 * for that hold's release instead (announced on its masters after `snapshot`).
 */
export interface Handoff {
  readonly snapshot: AnnouncementSnapshot;
  /** Masters where the sibling holds the lock. */
  readonly masters: readonly number[];
  /** Its lease: the longest the next head waits without news. */
  readonly leaseMs: number;
}

/** Why a waiter stopped waiting. */
export type WakeReason = 'released' | 'resubscribed' | 'timeout';

type Listener = () => void;

/**
 * The local waiters of one lock, in arrival order. Only the head of the queue
 * sends rounds to the masters: the tasks of one process would only split the
 * votes among themselves, so they take turns, and a process contends with one
 * waiter per lock however many of its tasks wait.
 */
class LockQueue {
  readonly tickets: Ticket[] = [];
  readonly announced: number[];
  resubscribes = 0;
  closedError: Error | undefined;
  handoff: Handoff | undefined;
  /** Enough masters acknowledged the subscription (or every subscription settled). */
  subscribed = false;
  private readonly listeners = new Set<Listener>();

  constructor(
    readonly channel: string,
    masterCount: number,
  ) {
    this.announced = new Array<number>(masterCount).fill(0);
  }

  notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  /**
   * Resolves when `check` gives a reason to wake, or with 'timeout' after
   * `timeoutMs`; rejects with the signal's reason or when the client closes.
   */
  wait(check: () => WakeReason | undefined, timeoutMs: number, signal: AbortSignal | undefined): Promise<WakeReason> {
    return new Promise<WakeReason>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (): void => {
        this.listeners.delete(listener);
        if (timer) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        finish();
        reject(signal?.reason);
      };
      const listener = (): void => {
        if (this.closedError) {
          finish();
          reject(this.closedError);
          return;
        }
        const reason = check();
        if (reason) {
          finish();
          resolve(reason);
        }
      };
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      this.listeners.add(listener);
      listener();
      if (!this.listeners.has(listener)) return;
      signal?.addEventListener('abort', onAbort, { once: true });
      if (Number.isFinite(timeoutMs)) {
        timer = setTimeout(
          () => {
            finish();
            resolve('timeout');
          },
          Math.max(0, Math.ceil(timeoutMs)),
        );
      }
    });
  }
}

/** One waiter's place in a lock's queue. */
export class Ticket {
  private left = false;

  constructor(
    private readonly queue: LockQueue,
    private readonly announcements: ReleaseAnnouncements,
  ) {}

  get isHead(): boolean {
    return this.queue.tickets[0] === this;
  }

  /**
   * Waits until this waiter is at the head of its lock's local queue. Resolves
   * false when `timeoutMs` runs out first; rejects with the signal's reason or
   * ClientClosedError.
   */
  async turn(timeoutMs: number, signal: AbortSignal | undefined): Promise<boolean> {
    const reason = await this.queue.wait(() => (this.isHead ? 'released' : undefined), timeoutMs, signal);
    return reason !== 'timeout' || this.isHead;
  }

  /** The hand-off the previous head left for this one, if any (taken once). */
  takeHandoff(): Handoff | undefined {
    const handoff = this.isHead ? this.queue.handoff : undefined;
    this.queue.handoff = undefined;
    return handoff;
  }

  snapshot(): AnnouncementSnapshot {
    this.throwIfClosed();
    return { announced: [...this.queue.announced], resubscribes: this.queue.resubscribes };
  }

  /** True when master `index` acknowledged this lock's channel. */
  isAcked(index: number): boolean {
    return this.announcements.isAcked(index, this.queue.channel);
  }

  /**
   * Sleeps until `needed` of the masters in `refused` announced a release since
   * `snapshot` (a majority may be free again), a subscriber reconnected (a
   * message may have been missed), or `timeoutMs` passed.
   */
  waitForReleases(
    snapshot: AnnouncementSnapshot,
    refused: readonly number[],
    needed: number,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<WakeReason> {
    return this.queue.wait(
      () => {
        if (this.queue.resubscribes !== snapshot.resubscribes) return 'resubscribed';
        let released = 0;
        for (const index of refused) if ((this.queue.announced[index] ?? 0) > (snapshot.announced[index] ?? 0)) released++;
        return released >= needed ? 'released' : undefined;
      },
      timeoutMs,
      signal,
    );
  }

  /**
   * Leaves the queue; the next waiter, if any, gets its turn. A head that
   * leaves holding the lock names the masters of its hold, so the next head
   * waits for their release instead of trying at once. Idempotent.
   */
  leave(holding?: { readonly masters: readonly number[]; readonly leaseMs: number }): void {
    if (this.left) return;
    this.left = true;
    const wasHead = this.isHead;
    if (wasHead) {
      this.queue.handoff =
        holding && !this.queue.closedError
          ? { snapshot: { announced: [...this.queue.announced], resubscribes: this.queue.resubscribes }, ...holding }
          : undefined;
    }
    this.announcements.leave(this.queue, this);
  }

  private throwIfClosed(): void {
    if (this.queue.closedError) throw this.queue.closedError;
  }
}

/**
 * Release announcements of every master, for every lock a local task waits on:
 * one subscriber connection per master, shared by all waiters of the client. A
 * lock's channel is subscribed on every master while a local task waits on it.
 */
export class ReleaseAnnouncements {
  private readonly subscribers: MasterSubscriber[];
  private readonly queues = new Map<string, LockQueue>();
  private closedError: Error | undefined;
  private readonly stopWatching: (() => void)[] = [];

  constructor(
    masters: readonly Master[],
    timeoutMs: number,
    /** Acknowledgements a waiter needs before it may try: N − Q + 1, so one of any majority announces to it. */
    private readonly acksNeeded: number,
    onError: (error: Error) => void,
  ) {
    this.subscribers = masters.map(
      (master) =>
        new MasterSubscriber(master.index, master.redis, timeoutMs, {
          message: (index, channel) => {
            const queue = this.queues.get(channel);
            if (!queue) return;
            queue.announced[index] = (queue.announced[index] ?? 0) + 1;
            queue.notify();
          },
          resubscribed: () => this.wakeAll(),
          error: onError,
        }),
    );
    // A master whose command connection comes back may make a majority possible
    // again: nothing announces that, so every waiter tries again.
    for (const master of masters) {
      let wasReady = master.redis.status === 'ready';
      const onReady = (): void => {
        if (wasReady) this.wakeAll();
        wasReady = true;
      };
      const onClose = (): void => {
        wasReady = true;
      };
      master.redis.on('ready', onReady);
      master.redis.on('close', onClose);
      this.stopWatching.push(() => {
        master.redis.off('ready', onReady);
        master.redis.off('close', onClose);
      });
    }
  }

  private wakeAll(): void {
    for (const queue of this.queues.values()) {
      queue.resubscribes++;
      queue.notify();
    }
  }

  /** True when local tasks already wait on `channel` (a newcomer queues behind them). */
  hasWaiters(channel: string): boolean {
    return (this.queues.get(channel)?.tickets.length ?? 0) > 0;
  }

  isAcked(index: number, channel: string): boolean {
    return this.subscribers[index]?.isAcked(channel) ?? false;
  }

  /**
   * Joins the queue of `channel` and resolves once enough masters acknowledged
   * the subscription (N − Q + 1 of them, or every subscription settled), so a
   * release by whoever holds a majority cannot go unheard. A master that does
   * not acknowledge in time leaves its waiters to their timers. Waits at most
   * `timeoutMs` for the acknowledgements (the caller's waitMs).
   * @throws ClientClosedError once closed; the signal's reason when it aborts.
   */
  async join(channel: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<Ticket> {
    if (this.closedError) throw this.closedError;
    let queue = this.queues.get(channel);
    if (!queue) {
      const created = new LockQueue(channel, this.subscribers.length);
      queue = created;
      this.queues.set(channel, created);
      void this.subscribeAll(channel).then(() => {
        created.subscribed = true;
        created.notify();
      });
    }
    const ticket = new Ticket(queue, this);
    queue.tickets.push(ticket);
    try {
      const joining = queue;
      await joining.wait(() => (joining.subscribed ? 'released' : undefined), timeoutMs, signal);
      if (queue.closedError) throw queue.closedError;
    } catch (error) {
      ticket.leave();
      throw error;
    }
    return ticket;
  }

  /** @internal Called by {@link Ticket.leave}. */
  leave(queue: LockQueue, ticket: Ticket): void {
    const index = queue.tickets.indexOf(ticket);
    if (index === -1) return;
    queue.tickets.splice(index, 1);
    if (queue.tickets.length === 0 && this.queues.get(queue.channel) === queue) {
      this.queues.delete(queue.channel);
      if (!this.closedError) for (const subscriber of this.subscribers) subscriber.unsubscribe(queue.channel);
    } else if (index === 0) {
      queue.notify();
    }
  }

  /** Rejects every waiter with `error` and closes the subscriber connections. */
  close(error: Error = new ClientClosedError()): void {
    this.closedError = error;
    for (const stop of this.stopWatching) stop();
    for (const queue of this.queues.values()) {
      queue.closedError = error;
      queue.notify();
    }
    this.queues.clear();
    for (const subscriber of this.subscribers) subscriber.close();
  }

  private subscribeAll(channel: string): Promise<void> {
    return new Promise<void>((resolve) => {
      let acked = 0;
      let settled = 0;
      const total = this.subscribers.length;
      for (const subscriber of this.subscribers) {
        void subscriber.subscribe(channel).then((ok) => {
          settled++;
          if (ok) acked++;
          if (acked >= this.acksNeeded || settled === total) resolve();
        });
      }
      if (total === 0) resolve();
    });
  }
}
