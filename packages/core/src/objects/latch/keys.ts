import { objectKey } from '../names.js';

/**
 * A count-down latch's Redis names (public layout, core README), sharing the hash tag `{<name>}`. Its ops are marked
 * `<prefix>:{<name>}:op:<clientId>:<op>` (names.ts opMarker; TTL commandTimeoutMs).
 */
export interface LatchKeys {
  /** String `<prefix>:{<name>}`: the remaining count (absent: zero). */
  readonly count: string;
  /** String `<prefix>:{<name>}:kind`: 'countDownLatch', so `inspect` tells the count from a semaphore's permits (set and deleted with the count). */
  readonly kind: string;
  /** Channel `<prefix>:{<name>}:zero`: message 'zero', once, when the count reaches zero. */
  readonly channel: string;
}

export function latchKeys(prefix: string, name: string): LatchKeys {
  const count = objectKey(prefix, name);
  return { count, kind: `${count}:kind`, channel: `${count}:zero` };
}
