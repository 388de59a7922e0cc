import type { EngineContext } from '../../engine/engine-context.js';
import { monotonicNow } from '../../connection/time.js';
import type { SemaphoreKeys } from './keys.js';
import type { SemaphoreStore } from './semaphore-store.js';

/** A waiter waiting this long (ms) makes its client publish a "need": clients that hear it release through Redis, so permits reach it. */
const NEED_AFTER_MS = 10;

/** The same while this client holds permits (its own releases serve its waiters in time). */
const NEED_WHILE_HOLDING_MS = 50;

/**
 * While no permit comes back through Redis, each announcement waits twice as long as the one before, up to this (ms):
 * permits held by long jobs are not freed by announcing, and every waiting client hears every need.
 */
const NEED_MAX_INTERVAL_MS = 1_000;

/** Entries of `held` kept before all are forgotten: a hint, never a leak. */
const MAX_HELD_ENTRIES = 4096;

/** When this client's calls on one semaphore began (arrival order), and the one timer that checks the oldest. */
interface NeedWatch {
  readonly since: Map<string, number>;
  timer: NodeJS.Timeout | undefined;
  /** Monotonic ms. */
  announcedAt: number;
  /** How long after an announcement the next may go: NEED_AFTER_MS, doubling while no permit comes back through Redis. */
  intervalMs: number;
}

/** Times this client's calls per semaphore and publishes `need:<clientId>` when one waited long; RedisSemaphore.heard hears them. */
export class NeedAnnouncer {
  private readonly watches = new Map<string, NeedWatch>();
  /** Permits acquired minus released, per channel (positive only): a hint, since permits are not owned. */
  private readonly held = new Map<string, number>();

  constructor(
    private readonly ctx: EngineContext,
    private readonly store: SemaphoreStore,
  ) {}

  begin(keys: SemaphoreKeys, id: string): void {
    let watch = this.watches.get(keys.channel);
    if (!watch) this.watches.set(keys.channel, (watch = { since: new Map(), timer: undefined, announcedAt: -Infinity, intervalMs: NEED_AFTER_MS }));
    watch.since.set(id, monotonicNow());
    if (!watch.timer) this.arm(keys, watch, NEED_AFTER_MS);
  }

  end(keys: SemaphoreKeys, id: string): void {
    const watch = this.watches.get(keys.channel);
    if (!watch) return;
    watch.since.delete(id);
    if (watch.since.size > 0) return;
    clearTimeout(watch.timer);
    this.watches.delete(keys.channel);
  }

  /** `delta` > 0: this client acquired permits; < 0: it released some. */
  countHeld(keys: SemaphoreKeys, delta: number): void {
    const held = (this.held.get(keys.channel) ?? 0) + delta;
    // A release of permits another client acquired must leave no entry behind.
    if (held <= 0) this.held.delete(keys.channel);
    else {
      if (this.held.size >= MAX_HELD_ENTRIES && !this.held.has(keys.channel)) this.held.clear();
      this.held.set(keys.channel, held);
    }
  }

  /** Permits came back through Redis on this semaphore: a need can move them again, so announcements go at the short interval. */
  permitsMoved(keys: SemaphoreKeys): void {
    const watch = this.watches.get(keys.channel);
    if (!watch || watch.intervalMs === NEED_AFTER_MS) return;
    watch.intervalMs = NEED_AFTER_MS;
    if (watch.timer) {
      clearTimeout(watch.timer);
      this.arm(keys, watch, NEED_AFTER_MS);
    }
  }

  private arm(keys: SemaphoreKeys, watch: NeedWatch, delayMs: number): void {
    watch.timer = setTimeout(() => this.check(keys, watch), Math.max(1, Math.ceil(delayMs))).unref();
  }

  /** Announces when the oldest call waited long, then at the watch's interval (1 ms slack: timers fire early by this clock), only while subscribed. */
  private check(keys: SemaphoreKeys, watch: NeedWatch): void {
    watch.timer = undefined;
    const oldest = watch.since.values().next();
    if (oldest.done || this.ctx.closed) return;
    const now = monotonicNow();
    const waited = now - oldest.value;
    const threshold = (this.held.get(keys.channel) ?? 0) > 0 ? NEED_WHILE_HOLDING_MS : NEED_AFTER_MS;
    const dueIn = watch.announcedAt + watch.intervalMs - 1 - now;
    let delayMs = NEED_AFTER_MS;
    // Not yet: checked again within NEED_AFTER_MS, as the threshold drops to it once this client's permits are released.
    if (waited < threshold) delayMs = Math.min(threshold - waited, NEED_AFTER_MS);
    else if (dueIn > 0) delayMs = dueIn;
    else if (this.ctx.queues.get(keys.channel)) {
      watch.announcedAt = now;
      delayMs = watch.intervalMs = Math.min(watch.intervalMs * 2, NEED_MAX_INTERVAL_MS);
      // In a timer: nothing may throw, not even synchronously.
      try {
        this.store.announceNeed(keys, this.ctx.clientId).catch(() => undefined);
      } catch {
        // A hint: the streak cap still moves permits.
      }
    }
    this.arm(keys, watch, delayMs);
  }
}
