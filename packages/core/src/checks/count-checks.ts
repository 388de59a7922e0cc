import { InvalidArgumentError } from '../errors.js';
import { describeValue } from './argument-checks.js';

/** Largest count accepted (permits, a latch's count): 2^31 − 1, as Java's int. */
export const MAX_COUNT = 2 ** 31 - 1;

/** Refused rather than coerced: a count of 0 is almost always a bug. @throws InvalidArgumentError */
export function checkCount(value: unknown, what: string, negative = false): number {
  const min = negative ? -MAX_COUNT : 1;
  if (typeof value !== 'number' || !Number.isInteger(value) || value === 0 || value < min || value > MAX_COUNT) {
    const range = negative ? `from ${-MAX_COUNT} to ${MAX_COUNT}, not 0` : `from 1 to ${MAX_COUNT}`;
    throw new InvalidArgumentError(`${what} must be an integer ${range}, got ${describeValue(value)}`);
  }
  return value;
}
