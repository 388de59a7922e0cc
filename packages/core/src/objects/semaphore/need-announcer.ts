import type { EngineContext } from '../../engine/engine-context.js';
import { monotonicNow } from '../../connection/time.js';
import type { SemaphoreKeys } from './keys.js';
import type { SemaphoreStore } from './semaphore-store.js';

/**
 * How long (ms) a waiter may wait before its client publishes a "need": clients
 * that hear it give their next release back through Redis, so permits reach
 * starving waiters and otherwise stay local (a hand-off costs no Redis call).
 */
const NEED_AFTER_MS = 10;

/** The same while this client holds permits (its own releases serve its waiters in time). */
const NEED_WHILE_HOLDING_MS = 50;

/** Permit counts kept per client before they are all forgotten: a hint, never a leak. */
const MAX_HELD_ENTRIES = 4096;

/**
 * When this client's calls on one semaphore began (arrival order), and the
 * one timer that checks whether the oldest has waited long; kept while calls run.
 */
interface NeedWatch {
  readonly since: Map<string, number>;
  timer: NodeJS.Timeout | undefined;
  /** When this client last announced its need (monotonic ms). */
  announcedAt: number;
}

/**
 * One client's side of the need announcements: times its calls per semaphore,
 * counts the permits it holds, and publishes `need:<clientId>` when a waiter
 * has waited long. Hearing them is RedisSemaphore.heard's.
 */
export class NeedAnnouncer {
  /** Running calls, by channel. */
  private readonly watches = new Map<string, NeedWatch>();
  /** Permits acquired minus released, per channel (positive only): a hint, since permits are not owned. */
  private readonly held = new Map<string, number>();

  constructor(
    private readonly ctx: EngineContext,
    private readonly store: SemaphoreStore,
  ) {}

  /** A call `id` on the semaphore of `keys` began: it may wait. */
  begin(keys: SemaphoreKeys, id: string): void {
    let watch = this.watches.get(keys.channel);
    if (!watch) {
      watch = { since: new Map(), timer: undefined, announcedAt: -Infinity };
      this.watches.set(keys.channel, watch);
    }
    watch.since.set(id, monotonicNow());
    if (!watch.timer) this.arm(keys, watch, NEED_AFTER_MS);
  }

  /** The call `id` ended, with or without permits. */
  end(keys: SemaphoreKeys, id: string): void {
    const watch = this.watches.get(keys.channel);
    if (!watch) return;
    watch.since.delete(id);
    if (watch.since.size > 0) return;
    clearTimeout(watch.timer);
    this.watches.delete(keys.channel);
  }

  /** This client acquired (positive) or released (negative) `delta` permits of the semaphore of `keys`. */
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

  /**
   * Announces once the oldest call waited NEED_AFTER_MS (NEED_WHILE_HOLDING_MS
   * while holding), about once per NEED_AFTER_MS (1 ms slack: timers fire early
   * by this clock), only while subscribed. Failures are ignored: the streak cap still moves permits.
   */
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
      // In a timer: nothing may throw out of here, not even synchronously.
      try {
        this.store.announceNeed(keys, this.ctx.clientId).catch(() => undefined);
      } catch {
        // The announcement is a hint; the backstop streak still moves permits.
      }
    }
    this.arm(keys, watch, waited >= NEED_AFTER_MS ? NEED_AFTER_MS : NEED_AFTER_MS - waited);
  }
}
