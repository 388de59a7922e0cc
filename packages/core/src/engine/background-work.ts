import { backoffDelayMs } from './backoff.js';
import { monotonicNow } from '../connection/time.js';
import { onAbort } from '../tasks/abort-fan-out.js';

export interface RetryPlan {
  /** Monotonic time after which no new try starts. */
  readonly until: number;
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
}

/** Background work (undos, releases finished after a failure), tracked and stopped by close(); nothing rejects: the caller reports failures. */
export class BackgroundWork {
  private readonly running = new Set<Promise<unknown>>();
  private readonly stopping = new AbortController();
  /** Aborted (and replaced) by {@link retryNow}: ends every wait between tries early. */
  private nudge = new AbortController();

  get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  /** Keeps `work` in view until it settles (one reaction, on the hot path of every Redlock release). */
  track(work: Promise<unknown>): void {
    const settled = work.then(
      () => void this.running.delete(settled),
      () => void this.running.delete(settled),
    );
    this.running.add(settled);
  }

  /** Tries `attempt` with jittered, growing delays until it resolves true (then true), the deadline passes or work stops. */
  retry(attempt: () => Promise<boolean>, plan: RetryPlan): Promise<boolean> {
    const work = (async (): Promise<boolean> => {
      for (let failures = 1; ; failures++) {
        try {
          if (await attempt()) return true;
        } catch {
          // A failed try is retried; the caller learns the outcome from the result.
        }
        const leftMs = plan.until - monotonicNow();
        if (leftMs <= 0 || this.stopped) return false;
        const delayMs = Math.min(leftMs, backoffDelayMs(failures, plan.minDelayMs, plan.maxDelayMs, Math.random()));
        await pause(delayMs, this.nudge.signal);
        if (this.stopped) return false;
      }
    })();
    this.track(work);
    return work;
  }

  /** The connection is back: retry now, not after the backoff grown during the outage (which keeps the lock from others). */
  retryNow(): void {
    const nudge = this.nudge;
    this.nudge = new AbortController();
    nudge.abort();
  }

  /** Stops every retry from starting another try (tries already sent still run). */
  stop(): void {
    this.stopping.abort();
    this.nudge.abort();
  }

  /** Resolves once no tracked work is left. Never rejects. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}

/**
 * Waits `ms` without holding the process open, or less when `signal` aborts. Every retry of a client waits on one signal: one
 * abort listener on it for all of them (timers/promises' own would add one per wait, and Node warns of a leak past 10).
 */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(() => {
      stopListening();
      resolve();
    }, ms);
    timer.unref();
    const stopListening = onAbort(signal, () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
