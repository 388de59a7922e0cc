/**
 * In-memory fakes of core's renewal seam (not of Redis): a hold, a backend whose
 * renew calls the test answers by hand, and a reporter that records.
 */
import type { LostReason, RenewableHold, RenewalBackend, RenewalReporter, RenewOutcome } from '@org/rlock-core/internal';

/** Drift as core computes it: 1 % of the lease plus 2 ms. */
export function driftMs(leaseMs: number): number {
  return leaseMs * 0.01 + 2;
}

export interface FakeHoldOptions {
  leaseMs?: number;
  /** Monotonic deadline; defaults to now + leaseMs − drift, as right after an acquire. */
  deadline?: number;
  /** Part of the key the fake backend batches by (a stand-in for server and slot). */
  shard?: string;
}

/** A hold that behaves like core's: extend only moves the deadline forward, lose deactivates. */
export class FakeHold implements RenewableHold {
  readonly key: string;
  readonly kind = 'lock';
  readonly owner = 'client-id:task-1';
  readonly token = '1700000000000000';
  readonly leaseMs: number;
  readonly shard: string;
  deadline: number;
  active = true;
  /** Every `extend(sentAt)` call, in order. */
  readonly extendCalls: number[] = [];
  /** Every `lose` call, in order, even on an inactive hold, so "exactly once" can be asserted. */
  readonly loseCalls: { reason: LostReason; cause: unknown; at: number; detail?: string }[] = [];

  constructor(
    readonly name: string,
    options: FakeHoldOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? 30_000;
    this.shard = options.shard ?? 'server-a';
    this.key = `rlock:{${name}}`;
    this.deadline = options.deadline ?? performance.now() + this.leaseMs - driftMs(this.leaseMs);
  }

  extend(sentAt: number): void {
    this.extendCalls.push(sentAt);
    if (!this.active) return;
    this.deadline = Math.max(this.deadline, sentAt + this.leaseMs - driftMs(this.leaseMs));
  }

  lose(reason: LostReason, cause?: unknown, detail?: string): void {
    this.loseCalls.push(detail === undefined ? { reason, cause, at: performance.now() } : { reason, cause, at: performance.now(), detail });
    this.active = false;
  }
}

/** One `renew` call the fake backend received, answered by the test. */
export interface RenewCall {
  readonly holds: readonly FakeHold[];
  /** performance.now() when renew was called. */
  readonly calledAt: number;
  settled: boolean;
  resolve(outcomes: RenewOutcome[]): void;
  reject(error: unknown): void;
}

/**
 * A backend that records every call and leaves it pending until the test answers
 * it, unless `autoReply` is set, which answers each call as it is made.
 */
export class FakeBackend implements RenewalBackend {
  maxBatch = 100;
  readonly calls: RenewCall[] = [];
  /** Answers each call at once (in a microtask) when set. */
  autoReply: ((holds: readonly FakeHold[]) => RenewOutcome[] | Error) | undefined;

  batchKey(hold: RenewableHold): string {
    return (hold as FakeHold).shard;
  }

  renew(holds: readonly RenewableHold[]): Promise<RenewOutcome[]> {
    const fakes = [...holds] as FakeHold[];
    return new Promise<RenewOutcome[]>((resolve, reject) => {
      const call: RenewCall = {
        holds: fakes,
        calledAt: performance.now(),
        settled: false,
        resolve: (outcomes) => {
          call.settled = true;
          resolve(outcomes);
        },
        reject: (error) => {
          call.settled = true;
          reject(error);
        },
      };
      this.calls.push(call);
      if (this.autoReply !== undefined) {
        const reply = this.autoReply(fakes);
        if (reply instanceof Error) call.reject(reply);
        else call.resolve(reply);
      }
    });
  }

  /** Calls not yet answered. */
  pending(): RenewCall[] {
    return this.calls.filter((call) => !call.settled);
  }

  /** Answers every pending call with `outcome` for each of its holds. */
  replyAll(outcome: RenewOutcome = 'renewed'): void {
    for (const call of this.pending()) call.resolve(call.holds.map(() => outcome));
  }
}

/** Records what the watchdog reports. */
export class FakeReporter implements RenewalReporter {
  readonly renewedCounts: number[] = [];
  readonly errors: Error[] = [];

  renewed(count: number): void {
    this.renewedCounts.push(count);
  }

  error(error: Error): void {
    this.errors.push(error);
  }
}

/** `count` holds named `<prefix>-<i>`. */
export function makeHolds(count: number, prefix = 'lock', options: FakeHoldOptions = {}): FakeHold[] {
  return Array.from({ length: count }, (_, i) => new FakeHold(`${prefix}-${i}`, options));
}

/** Lease of most test holds and its renewal period. */
export const LEASE_MS = 30_000;
export const PERIOD_MS = LEASE_MS / 3;
