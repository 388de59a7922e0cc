import type { ObjectInfoBase } from '../inspect/info.js';

/** A semaphore (`getSemaphore`): available permits, owned by nobody. */
export interface SemaphoreInfo extends ObjectInfoBase {
  /** The kind: a semaphore. */
  readonly kind: 'semaphore';
  /** Available permits (negative after `addPermits` took more than there were). */
  readonly permits: number;
}
