import { objectKey } from '../names.js';

/**
 * A semaphore's Redis names (public layout, core README); all share the hash tag `{<name>}`: one Cluster slot. Its op markers are
 * `<prefix>:{<name>}:op:<clientId>:<op>` (names.ts opMarker; TTL commandTimeoutMs, an acquire's and its cancel's 3 × commandTimeoutMs).
 */
export interface SemaphoreKeys {
  /** String `<prefix>:{<name>}`: the available permits (absent: not set, 0). */
  readonly permits: string;
  /** String `<prefix>:{<name>}:kind`: 'semaphore', so `inspect` tells the permits from a latch's count (set by trySetPermits, addPermits and a cancel; a release stays one write). */
  readonly kind: string;
  /** Channel `<prefix>:{<name>}:permits`: `<came back>:<available>` after permits came back; `need:<clientId>` from a client whose waiter waited long. */
  readonly channel: string;
}

export function semaphoreKeys(prefix: string, name: string): SemaphoreKeys {
  const permits = objectKey(prefix, name);
  return { permits, kind: `${permits}:kind`, channel: `${permits}:permits` };
}
