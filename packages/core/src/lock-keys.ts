import calculateSlot from 'cluster-key-slot';
import { InvalidArgumentError } from './errors.js';
import { describe } from './argument-checks.js';
import { fenceTagForSlot } from './fence-slot-tags.js';

/** Longest lock name accepted, in UTF-8 bytes. */
export const MAX_NAME_BYTES = 1024;

/**
 * The Redis names of one lock. All share the lock's hash tag `{<name>}` (the fence
 * counter a tag of the same slot), so every script touches a single Cluster slot.
 * This layout is public (see the core README) and changes only in a major version.
 */
export interface LockKeys {
  /** Hash `<prefix>:{<name>}` with fields owner, count, token, op. */
  readonly lock: string;
  /** String `<prefix>:{<name>}:released`: op id of the last full release (replay window). */
  readonly released: string;
  /** Channel `<prefix>:{<name>}:release`: 'unlock' or 'force' on each full release. */
  readonly channel: string;
  /** String `<prefix>:{<tag>}:fence`: last fencing token of the lock's hash slot. */
  readonly fence: string;
}

export function lockKeys(prefix: string, name: string): LockKeys {
  const lock = `${prefix}:{${name}}`;
  return {
    lock,
    released: `${lock}:released`,
    channel: `${lock}:release`,
    fence: `${prefix}:{${fenceTagForSlot(calculateSlot(lock))}}:fence`,
  };
}

/**
 * A lock name: a non-empty string of at most 1,024 UTF-8 bytes without braces
 * (a brace would change the key's hash tag, and with it the Cluster slot).
 * @throws InvalidArgumentError
 */
export function checkLockName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new InvalidArgumentError(`lock name must be a non-empty string, got ${describe(name)}`);
  }
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) {
    throw new InvalidArgumentError(`lock name must be at most ${MAX_NAME_BYTES} bytes in UTF-8`);
  }
  if (name.includes('{') || name.includes('}')) {
    throw new InvalidArgumentError(`lock name must not contain "{" or "}", got ${describe(name)}`);
  }
  return name;
}

/**
 * A key prefix: a non-empty string without braces, at most 256 bytes.
 * @throws InvalidArgumentError
 */
export function checkKeyPrefix(prefix: unknown): string {
  if (typeof prefix !== 'string' || prefix.length === 0 || Buffer.byteLength(prefix, 'utf8') > 256) {
    throw new InvalidArgumentError(`keyPrefix must be a non-empty string of at most 256 bytes, got ${describe(prefix)}`);
  }
  if (prefix.includes('{') || prefix.includes('}')) {
    throw new InvalidArgumentError(`keyPrefix must not contain "{" or "}", got ${describe(prefix)}`);
  }
  return prefix;
}
