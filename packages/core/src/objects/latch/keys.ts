import { objectKey } from '../names.js';

/** A count-down latch's Redis names (public layout, core README), sharing the hash tag `{<name>}`. */
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

/** String `<prefix>:{<name>}:op:<clientId>:<op>` (TTL = commandTimeoutMs): the outcome of op `op`. */
export function latchOpMarker(keys: LatchKeys, clientId: string, op: string): string {
  return `${keys.count}:op:${clientId}:${op}`;
}
