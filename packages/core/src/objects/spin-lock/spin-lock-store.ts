import type { Deployment } from '../../connection/deployment.js';
import type { AcquireReply } from '../../engine/attempt.js';
import type { BackoffWait } from '../../engine/wait-strategy.js';
import type { LockRequest } from '../lock-options.js';
import type { LockKeys } from '../lock/keys.js';
import { ServerLockStore, type ClientWaits } from '../lock/server-lock-store.js';

/**
 * The plain lock's protocol (its keys, scripts and holds: a spin lock and a lock of one name are one lock), waited for by
 * back-off: its waiters subscribe to nothing, and its refused tries leave no trace in Redis.
 */
export class SpinLockStore extends ServerLockStore {
  override readonly object = 'spin_lock';

  constructor(
    deployment: Deployment,
    replayWindowMs: number,
    waits: ClientWaits,
    readonly waitStrategy: BackoffWait,
  ) {
    super(deployment, replayWindowMs, '', waits);
  }

  /**
   * The lock's try, told that its caller does not wait (`waitMs` 0: a refusal registers no waiting client). A spin lock hears
   * no release, so a release must not wake its client for nothing; the rest of the request goes through as it came.
   */
  override acquire(keys: LockKeys, owner: string, leaseMs: number, op: string, request?: LockRequest): Promise<AcquireReply> {
    return super.acquire(keys, owner, leaseMs, op, { leaseMs: undefined, signal: undefined, ...request, waitMs: 0 });
  }
}
