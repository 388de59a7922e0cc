import type { HoldRegistry } from '@org/rlock-core';
import type { MasterSet } from './master-set.js';
import type { ResolvedRetryOptions } from './redlock-options.js';
import type { RedlockHold, RedlockHoldObserver } from './redlock-hold.js';
import type { ReleaseAnnouncements } from './release-announcements.js';

/** What a Redlock lock object needs from the client that made it. */
export interface RedlockRuntime {
  readonly clientId: string;
  readonly keyPrefix: string;
  readonly watchdogTimeoutMs: number;
  readonly driftFactor: number;
  readonly retry: ResolvedRetryOptions;
  /**
   * How long a waiting `lock()` keeps trying through rounds without a possible
   * majority before it rejects with their QuorumError (commandTimeoutMs: the
   * masters are "unreachable for that long").
   */
  readonly unavailableAfterMs: number;
  /** Longest sleep of a waiter between rounds without news: a third of the watchdog lease. */
  readonly maxSleepMs: number;
  /** False for a client without a renewer: it takes fixed leases only. */
  readonly canRenew: boolean;
  readonly masters: MasterSet;
  readonly announcements: ReleaseAnnouncements;
  readonly holds: HoldRegistry<RedlockHold>;
  readonly holdObserver: RedlockHoldObserver;
  readonly closed: boolean;
  /** @throws ClientClosedError once the client is closed. */
  assertOpen(): void;
  /** Tracks a round in flight until it settled (close waits for it, so its grants are undone before the connections quit). */
  inFlight<T>(round: Promise<T>): Promise<T>;
  /** Emits `lockAcquired`; never throws (a throwing listener is reported as an `error` event). */
  acquired(hold: RedlockHold): void;
  /** Emits `lockReleased`; never throws. */
  released(hold: RedlockHold): void;
  /** A failure in the background: reported as an `error` event, never thrown. */
  backgroundError(error: unknown): void;
}
