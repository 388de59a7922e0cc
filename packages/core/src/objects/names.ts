import calculateSlot from 'cluster-key-slot';
import { InvalidArgumentError } from '../errors.js';
import { describeValue } from '../checks/argument-checks.js';
import { fenceTagForSlot } from './fence-slot-tags.js';

/** Longest object name accepted, in UTF-8 bytes. */
export const MAX_NAME_BYTES = 1024;

/**
 * The main key of an object: `<prefix>:{<name>}`. Every key and channel of the
 * object starts with it, so they share the hash tag `{<name>}` and with it one
 * Cluster slot: every script touches a single slot. This layout is public (see
 * the core README) and changes only in a major version.
 */
export function objectKey(prefix: string, name: string): string {
  return `${prefix}:{${name}}`;
}

/**
 * `<prefix>:client:`, the start of every client's notice channel: a script
 * appends the client id it reads from an owner, so this is all it is given.
 */
export function clientNoticePrefix(prefix: string): string {
  return `${prefix}:client:`;
}

/**
 * The channel where the client `clientId` hears notices about its holds:
 * `<prefix>:client:<clientId>`. Published with plain PUBLISH (it has no hash
 * tag of any object, and on a Cluster a script may SPUBLISH only in its own slot).
 */
export function clientNoticeChannel(prefix: string, clientId: string): string {
  return clientNoticePrefix(prefix) + clientId;
}

/**
 * The fencing counter shared by every object in the slot of `key`:
 * `<prefix>:{<slot tag>}:fence`, where the tag is the smallest decimal string
 * hashing to that slot. At most 16,384 counters however many names are used.
 */
export function fenceKey(prefix: string, key: string): string {
  return `${prefix}:{${fenceTagForSlot(calculateSlot(key))}}:fence`;
}

/**
 * A name: a non-empty string of at most 1,024 UTF-8 bytes without braces (a
 * brace would change the key's hash tag, and with it the Cluster slot).
 * @throws InvalidArgumentError
 */
export function checkName(name: unknown, what = 'lock name'): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new InvalidArgumentError(`${what} must be a non-empty string, got ${describeValue(name)}`);
  }
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) {
    throw new InvalidArgumentError(`${what} must be at most ${MAX_NAME_BYTES} bytes in UTF-8`);
  }
  if (name.includes('{') || name.includes('}')) {
    throw new InvalidArgumentError(`${what} must not contain "{" or "}", got ${describeValue(name)}`);
  }
  return name;
}

/**
 * A key prefix: a non-empty string without braces, at most 256 bytes.
 * @throws InvalidArgumentError
 */
export function checkKeyPrefix(prefix: unknown): string {
  if (typeof prefix !== 'string' || prefix.length === 0 || Buffer.byteLength(prefix, 'utf8') > 256) {
    throw new InvalidArgumentError(`keyPrefix must be a non-empty string of at most 256 bytes, got ${describeValue(prefix)}`);
  }
  if (prefix.includes('{') || prefix.includes('}')) {
    throw new InvalidArgumentError(`keyPrefix must not contain "{" or "}", got ${describeValue(prefix)}`);
  }
  return prefix;
}
