import type { EngineContext } from '../../engine/engine-context.js';
import { monotonicNow } from '../../connection/time.js';
import type { SemaphoreKeys } from './keys.js';
import type { SemaphoreStore } from './semaphore-store.js';

/** A waiter waiting this long (ms) makes its client publish a "need": clients that hear it release through Redis, so permits reach it. */
const NEED_AFTER_MS = 10;

/** The same while this client holds permits (its own releases serve its waiters in time). */
const NEED_WHILE_HOLDING_MS = 50;

/** Entries of `held` kept before all are forgotten: a hint, never a leak. */
const MAX_HELD_ENTRIES = 4096;

/** When this client's calls on one semaphore began (arrival order), and the one timer that checks the oldest. */
interface NeedWatch {
  readonly since: Map<string, number>;
  timer: NodeJS.Timeout | undefined;
  /** Monotonic ms. */
  announcedAt: number;
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
    if (!watch) {
      watch = { since: new Map(), timer: undefined, announcedAt: -Infinity };
      this.watches.set(keys.channel, watch);
    }
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

  private arm(keys: SemaphoreKeys, watch: NeedWatch, delayMs: number): void {
    watch.timer = setTimeout(() => this.check(keys, watch), Math.max(1, Math.ceil(delayMs)));
    watch.timer.unref();
  }

  /** Announces when the oldest call waited long, about once per NEED_AFTER_MS (1 ms slack: timers fire early by this clock), only while subscribed. */
  private check(keys: SemaphoreKeys, watch: NeedWatch): void {
    watch.timer = undefined;
    const oldest = watch.since.values().next();
    if (oldest.done || this.ctx.closed) return;
    const now = monotonicNow();
    const waited = now - oldest.value;
    const holding = (this.held.get(keys.channel) ?? 0) > 0;
    const long = waited >= (holding ? NEED_WHILE_HOLDING_MS : NEED_AFTER_MS);
    if (long && now - watch.announcedAt >= NEED_AFTER_MS - 1 && this.ctx.queues.get(keys.channel)) {
      watch.announcedAt = now;
      // In a timer: nothing may throw, not even synchronously.
      try {
        this.store.announceNeed(keys, this.ctx.clientId).catch(() => undefined);
      } catch {
        // A hint: the streak cap still moves permits.
      }
    }
    this.arm(keys, watch, waited >= NEED_AFTER_MS ? NEED_AFTER_MS : NEED_AFTER_MS - waited);
  }
}
