import { monotonicNow } from '../connection/time.js';

/** One timer for short delays set on every operation: a timer each (and its async resource) would cost more than the operation. */
export class DelayQueue {
  /** Due time (monotonic ms) and function, in the order they are due. */
  private readonly due: [number, () => void][] = [];
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;

  add(delayMs: number, fn: () => void): void {
    const at = monotonicNow() + delayMs;
    let index = this.due.length;
    while (index > 0 && (this.due[index - 1] as [number, () => void])[0] > at) index--;
    this.due.splice(index, 0, [at, fn]);
    if (at < this.timerAt) this.arm(at);
  }

  private arm(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(this.fire, Math.max(1, Math.ceil(at - monotonicNow()))).unref();
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = monotonicNow();
    let count = 0;
    while (count < this.due.length && (this.due[count] as [number, () => void])[0] <= now) count++;
    // Taken off in one splice: a burst of thousands due at once costs one pass, not a shift each.
    for (const [, fn] of this.due.splice(0, count)) {
      try {
        fn();
      } catch (error) {
        queueMicrotask(() => {
          throw error; // reported as any timer's would be, once the others due now have run
        });
      }
    }
    const next = this.due[0];
    if (next) this.arm(next[0]);
  };
}
