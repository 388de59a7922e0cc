import { backoffDelayMs } from './backoff.js';
import { monotonicNow, sleepFor } from '../connection/time.js';

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
        // Every retry of a client waits on one signal: one abort listener on it for all of them (see sleepFor).
        await sleepFor(delayMs, this.nudge.signal, false).catch(() => undefined);
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
