import calculateSlot from 'cluster-key-slot';
import { InvalidArgumentError } from '../errors.js';
import { checkRedisString, describeValue } from '../checks/argument-checks.js';
import { fenceTagForSlot } from './fence-slot-tags.js';

/** Longest object name accepted, in UTF-8 bytes. */
export const MAX_NAME_BYTES = 1024;

/** The start of every key and channel of the object, so all share one Cluster slot. Public layout. */
export function objectKey(prefix: string, name: string): string {
  return `${prefix}:{${name}}`;
}

/** A script appends the client id it reads from an owner, so this is all it is given. */
export function clientNoticePrefix(prefix: string): string {
  return `${prefix}:client:`;
}

/** Plain PUBLISH: a script may SPUBLISH only in its own slot. */
export function clientNoticeChannel(prefix: string, clientId: string): string {
  return clientNoticePrefix(prefix) + clientId;
}

/** String `<main key>:op:<clientId>:<op>`: the outcome of an object's op `op`, kept a replay window or a few, so a replay never counts twice. */
export function opMarker(mainKey: string, clientId: string, op: string): string {
  return `${mainKey}:op:${clientId}:${op}`;
}

/** The fencing counter shared by the slot of `key` (at most 16,384 counters). */
export function fenceKey(prefix: string, key: string): string {
  return `${prefix}:{${fenceTagForSlot(calculateSlot(key))}}:fence`;
}

/**
 * Well-formed Unicode, so two names never share a key; no braces: one would change the key's hash tag, and with it the Cluster slot.
 * @throws InvalidArgumentError
 */
export function checkName(name: unknown, what = 'lock name', maxBytes = MAX_NAME_BYTES): string {
  const checked = checkRedisString(name, what, maxBytes);
  if (checked.includes('{') || checked.includes('}')) {
    throw new InvalidArgumentError(`${what} must not contain "{" or "}", got ${describeValue(checked)}`);
  }
  return checked;
}

/** As a name, of at most 256 bytes. @throws InvalidArgumentError */
export function checkKeyPrefix(prefix: unknown): string {
  return checkName(prefix, 'keyPrefix', 256);
}
