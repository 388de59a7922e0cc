import type { Deployment } from '../../connection/deployment.js';
import type { AcquireReply } from '../../engine/attempt.js';
import type { EngineContext } from '../../engine/engine-context.js';
import type { BackoffWait } from '../../engine/wait-with-backoff.js';
import { ClientWakeScripts } from '../lock/client-wake-scripts.js';
import type { PlainLockKeys } from '../lock/keys.js';
import { EXCLUSIVE_LOCK, type AcquireTerms, type LockVariant } from '../lock/lock-store.js';
import { ServerLockStore } from '../lock/server-lock-store.js';

/** The lock, measured as `spin_lock`. */
export const SPIN: LockVariant = Object.freeze({ ...EXCLUSIVE_LOCK, object: 'spin_lock' });

/** Every try of a spin lock, whatever its caller's wait: one made once, not per try. */
const TRIES_ONCE: AcquireTerms = Object.freeze({ waits: false, failFast: false });

/**
 * The plain lock's protocol (its keys, scripts and holds: a spin lock and a lock of one name are one lock), waited for by
 * back-off: its waiters subscribe to nothing, and its refused tries leave no trace in Redis.
 */
export class SpinLockStore extends ServerLockStore<PlainLockKeys> {
  constructor(
    deployment: Deployment,
    context: EngineContext,
    readonly waitStrategy: BackoffWait,
  ) {
    super(deployment, context.commandTimeoutMs, context.keyPrefix, SPIN, new ClientWakeScripts(deployment, context));
  }

  /**
   * The lock's try, told that its caller does not wait (a refusal registers no waiting client): a spin lock hears no
   * release, so a release must not wake its client for nothing.
   */
  override acquire(keys: PlainLockKeys, owner: string, leaseMs: number, op: string): Promise<AcquireReply> {
    return super.acquire(keys, owner, leaseMs, op, TRIES_ONCE);
  }
}
