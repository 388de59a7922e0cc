import type { ObjectInfoBase } from '../inspect/info.js';

/** A permit-expirable semaphore (`getPermitExpirableSemaphore`): available permits and leased ones. */
export interface PermitExpirableSemaphoreInfo extends ObjectInfoBase {
  /** The kind: a permit-expirable semaphore. */
  readonly kind: 'permitExpirableSemaphore';
  /** Available permits, counting those whose lease has lapsed (the next call gives them back). */
  readonly permits: number;
}
