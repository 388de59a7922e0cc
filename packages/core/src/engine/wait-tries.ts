import { RedisUnavailableError } from '../errors.js';
import { monotonicNow } from '../connection/time.js';
import { backoffDelayMs } from './backoff.js';
import type { EngineContext } from './engine-context.js';
import type { TryOutcome } from './attempt.js';
import type { WaitCall } from './wait-call.js';

/**
 * A waiting call's tries and subscriptions, whatever wakes it: a Redis failure among them is ridden out with jittered backoff
 * for up to commandTimeoutMs (no later than waitMs, when the last failure is the timeout's cause); waitMs 0 fails at once.
 */
export class WaitTries<G> {
  private failingSince: number | undefined;
  private failures = 0;

  constructor(
    private readonly ctx: EngineContext,
    private readonly call: WaitCall<G>,
  ) {}

  /** True while the latest try or subscription failed (Redis, not a holder, is why it waits). */
  get failing(): boolean {
    return this.failingSince !== undefined;
  }

  /** How long to wait before trying again after `error`; rethrows it when it is no outage, or the outage lasted too long. */
  failed(error: unknown): number {
    if (!(error instanceof RedisUnavailableError) || this.call.triesOnce) throw error;
    this.call.failure = error;
    this.failingSince ??= monotonicNow();
    if (monotonicNow() - this.failingSince >= this.ctx.commandTimeoutMs) throw error;
    return backoffDelayMs(++this.failures, Math.min(50, this.ctx.commandTimeoutMs), this.ctx.commandTimeoutMs, Math.random());
  }

  /** Redis answered: the outage, if any, is over; a refusal's failure (no majority answered) is the timeout's cause. */
  answered(outcome: TryOutcome<G>): TryOutcome<G> {
    this.failingSince = undefined;
    this.failures = 0;
    this.call.failure = 'failure' in outcome ? outcome.failure : undefined;
    return outcome;
  }

  /** One try: its outcome, or a failure ridden out as a wait before the next. */
  async tryOnce(): Promise<TryOutcome<G>> {
    try {
      return this.answered(await this.call.tryOnce(this.ctx));
    } catch (error) {
      return { retryInMs: this.failed(error) };
    }
  }
}
