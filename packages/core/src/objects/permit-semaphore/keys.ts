import { fenceKey, objectKey } from '../names.js';

/**
 * A permit-expirable semaphore's Redis names (public layout, core README), all in one Cluster slot. Its trySetPermits and addPermits
 * ops are marked `<prefix>:{<name>}:op:<clientId>:<op>` (names.ts opMarker; TTL commandTimeoutMs).
 */
export interface PermitSemaphoreKeys {
  /** String `<prefix>:{<name>}`: the available permits (absent: not set, 0). */
  readonly permits: string;
  /** Sorted set `<prefix>:{<name>}:leases`: permit id → lease end (Unix ms, server clock). */
  readonly leases: string;
  /** Hash `<prefix>:{<name>}:holders`: permit id → fencing token. */
  readonly holders: string;
  /** String `<prefix>:{<name>}:kind`: 'permitExpirableSemaphore', so `inspect` names the kind with no permit leased (set with the permits). */
  readonly kind: string;
  /** String `<prefix>:{<slot tag>}:fence`: last fencing token of the slot. */
  readonly fence: string;
  /** Channel `<prefix>:{<name>}:permits`: `<came back>:<available>` when permits came back and some are available. */
  readonly channel: string;
}

export function permitSemaphoreKeys(prefix: string, name: string): PermitSemaphoreKeys {
  return keysOfMain(objectKey(prefix, name), prefix);
}

/** The keys of the semaphore whose permits key is `permits` (`prefix` only for the fence counter). */
export function keysOfMain(permits: string, prefix = ''): PermitSemaphoreKeys {
  return {
    permits,
    leases: `${permits}:leases`,
    holders: `${permits}:holders`,
    kind: `${permits}:kind`,
    fence: prefix === '' ? '' : fenceKey(prefix, permits),
    channel: `${permits}:permits`,
  };
}

/** String `<prefix>:{<name>}:permit:<id>` (TTL = commandTimeoutMs): 'cancelled' or 'released:<op>'. */
export function permitMarker(keys: PermitSemaphoreKeys, id: string): string {
  return `${keys.permits}:permit:${id}`;
}
