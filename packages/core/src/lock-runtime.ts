import type { Hold, HoldObserver } from './hold.js';
import type { HoldRegistry } from './hold-registry.js';
import type { LockBackend } from './lock-backend.js';
import type { ReleaseSubscriber } from './release-subscriber.js';

/** What a lock object needs from the client that made it. */
export interface LockRuntime {
  readonly clientId: string;
  readonly keyPrefix: string;
  readonly watchdogTimeoutMs: number;
  /** Longest sleep between tries of a waiter: a lost release message costs at most this. */
  readonly maxSleepMs: number;
  /** False for a client without a renewer: it takes fixed leases only. */
  readonly canRenew: boolean;
  readonly backend: LockBackend;
  readonly subscriber: ReleaseSubscriber;
  readonly registry: HoldRegistry;
  readonly holdObserver: HoldObserver;
  readonly closed: boolean;
  /** @throws ClientClosedError once the client is closed. */
  assertOpen(): void;
  acquired(hold: Hold): void;
  released(hold: Hold): void;
  /** A failure in the background: reported as an `error` event, never thrown. */
  backgroundError(error: unknown): void;
}
