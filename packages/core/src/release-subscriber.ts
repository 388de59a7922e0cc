import type { Redis } from 'ioredis';
import { boundedCall } from './redis-errors.js';
import { ClientClosedError } from './errors.js';
import { openSubscriberConnection } from './subscriber-connection.js';

/** Why a sleeping waiter woke. */
export type WakeReason = 'released' | 'timeout' | 'resubscribed';

/**
 * One task waiting for a lock. It sleeps only between tries; the channel wakes
 * one sleeping waiter per release message, in arrival order.
 */
export class Waiter {
  woken = false;
  private wake: ((reason: WakeReason) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly channel: ChannelWaiters,
    /** The owner this waiter acquires for. */
    readonly owner: string,
  ) {}

  get sleeping(): boolean {
    return this.wake !== undefined;
  }

  /**
   * Sleeps until a release wakes this waiter, `timeoutMs` passes, or `signal`
   * aborts (then rejects with its reason). A release announced while this waiter
   * was trying is not lost: it is kept as a pending wake and consumed here.
   */
  sleep(timeoutMs: number, signal: AbortSignal | undefined): Promise<WakeReason> {
    if (this.channel.takePendingWake()) {
      this.woken = true;
      return Promise.resolve('released');
    }
    return new Promise<WakeReason>((resolve, reject) => {
      const onAbort = () => {
        this.settle();
        reject(signal?.reason);
      };
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.timer = setTimeout(() => this.fire('timeout'), Math.max(1, timeoutMs));
      this.wake = (reason) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(reason);
      };
      this.channel.closedError && this.fire('timeout');
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

/** The local waiters of one lock channel, in arrival order. */
export class ChannelWaiters {
  readonly waiters: Waiter[] = [];
  pendingWakes = 0;
  closedError: Error | undefined;
  /** Until then (monotonic ms) a release wakes no local waiter: other clients' waiters go first. */
  private yieldUntil = 0;
  private yieldTimer: NodeJS.Timeout | undefined;
  subscribed: Promise<void> | undefined;

  constructor(readonly name: string) {}

  takePendingWake(): boolean {
    if (this.pendingWakes === 0) return false;
    this.pendingWakes--;
    return true;
  }

  /** Wakes the longest-waiting sleeper; with none asleep, keeps the wake for the next one to sleep. */
  wakeOne(): void {
    const sleeper = this.waiters.find((w) => w.sleeping);
    if (sleeper) sleeper.fire('released');
    else if (this.pendingWakes < this.waiters.length) this.pendingWakes++;
  }

  /**
   * Wakes every waiter. Those busy trying cannot be woken; each leaves a pending
   * wake so its next sleep returns at once (what it tried may predate the event).
   */
  /** A release message arrived: wake one waiter now, or once this client's turn to yield is over. */
  released(): void {
    const wait = this.yieldUntil - performance.now();
    if (wait <= 0) {
      this.wakeOne();
      return;
    }
    if (this.yieldTimer) return;
    this.yieldTimer = setTimeout(() => {
      this.yieldTimer = undefined;
      this.wakeOne();
    }, Math.ceil(wait));
    this.yieldTimer.unref();
  }

  /** This client just released the lock while other clients wait on it: let them try first. */
  yieldFor(ms: number): void {
    this.yieldUntil = performance.now() + ms;
  }

  wakeAll(reason: WakeReason): void {
    let busy = 0;
    for (const waiter of this.waiters) {
      if (waiter.sleeping) waiter.fire(reason);
      else busy++;
    }
    this.pendingWakes = Math.min(this.waiters.length, this.pendingWakes + busy);
  }
}

/**
 * The client's single subscriber connection, shared by all waiters of all locks.
 * A channel is subscribed while at least one local task waits on it; every try
 * that precedes a sleep happens after the subscription was acknowledged, so no
 * release announced after that try can be missed. After a reconnect (ioredis
 * resubscribes by itself) every waiter tries again, since messages published
 * while the connection was down are gone.
 */
export class ReleaseSubscriber {
  private connection: Redis | undefined;
  private readonly channels = new Map<string, ChannelWaiters>();
  private closed = false;

  constructor(
    private readonly source: Redis,
    private readonly timeoutMs: number,
    private readonly onError: (error: Error) => void,
  ) {}

  /** True when local tasks already wait on `channel` (a new waiter then queues behind them). */
  hasWaiters(channel: string): boolean {
    return (this.channels.get(channel)?.waiters.length ?? 0) > 0;
  }

  /** Joins the queue of `channel` and resolves once the subscription is acknowledged. */
  async join(channel: string, owner: string): Promise<Waiter> {
    if (this.closed) throw new ClientClosedError();
    let state = this.channels.get(channel);
    if (!state) {
      state = new ChannelWaiters(channel);
      this.channels.set(channel, state);
    }
    const waiter = new Waiter(state, owner);
    state.waiters.push(waiter);
    try {
      state.subscribed ??= this.subscribe(state);
      await state.subscribed;
    } catch (error) {
      this.leave(waiter, false);
      throw error;
    }
    return waiter;
  }

  /**
   * After this client's own full release reached `receivers` subscriber
   * connections: if some of them are other clients' (ours counts one while local
   * tasks wait), hold back the local wake for `ms`. The process that just
   * released is the one whose event loop is awake, so without this it would win
   * the next round far more often than its share.
   */
  releasedHere(channel: string, receivers: number, ms: number): void {
    const state = this.channels.get(channel);
    if (state && receivers > 1) state.yieldFor(ms);
  }

  /** Wakes the other sleeping waiters of `owner` on the same lock: they can reenter now. */
  wakeOwner(acquirer: Waiter, owner: string): void {
    for (const waiter of acquirer.channel.waiters) {
      if (waiter !== acquirer && waiter.owner === owner) waiter.fire('released');
    }
  }

  /**
   * Leaves the queue. A waiter that was woken by a release and leaves without the
   * lock (aborted, timed out, failed) passes the wake on to the next one.
   */
  leave(waiter: Waiter, acquired: boolean): void {
    const state = waiter.channel;
    const index = state.waiters.indexOf(waiter);
    if (index === -1) return;
    state.waiters.splice(index, 1);
    waiter.fire('timeout');
    if (waiter.woken && !acquired) state.wakeOne();
    if (state.waiters.length === 0 && this.channels.get(state.name) === state) {
      this.channels.delete(state.name);
      if (state.subscribed) {
        state.subscribed.then(
          () => this.unsubscribe(state.name),
          () => undefined,
        );
      }
    }
  }

  /** Rejects every waiter with `error` and closes the connection. */
  async close(error: Error): Promise<void> {
    this.closed = true;
    for (const state of this.channels.values()) {
      state.closedError = error;
      state.wakeAll('timeout');
    }
    this.channels.clear();
    const connection = this.connection;
    this.connection = undefined;
    if (connection) {
      connection.removeAllListeners('message');
      connection.disconnect();
    }
  }

  private ensureConnection(): Redis {
    if (this.connection) return this.connection;
    const connection = openSubscriberConnection(this.source, {
      message: (channel) => this.channels.get(channel)?.released(),
      resubscribed: () => {
        for (const state of this.channels.values()) state.wakeAll('resubscribed');
      },
      // Connection errors reach waiters as timeouts of their next try.
      error: (error) => this.onError(error),
    });
    this.connection = connection;
    return connection;
  }

  private async subscribe(state: ChannelWaiters): Promise<void> {
    const connection = this.ensureConnection();
    try {
      await boundedCall(() => connection.subscribe(state.name), this.timeoutMs, 'SUBSCRIBE', state.name);
    } catch (error) {
      if (this.channels.get(state.name) === state) state.subscribed = undefined;
      throw error;
    }
  }

  private unsubscribe(channel: string): void {
    const connection = this.connection;
    if (!connection || this.channels.has(channel)) return;
    connection.unsubscribe(channel).catch((error: unknown) => {
      if (!this.closed) this.onError(error instanceof Error ? error : new Error(String(error)));
    });
  }
}
