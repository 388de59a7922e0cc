import { InvalidArgumentError } from '../errors.js';
import { redactUrls } from './redact.js';

/** Largest duration Node timers accept (2^31 − 1 ms, about 24.8 days). */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/** Refused, not rounded: a rounded lease is not the one asked for. @throws InvalidArgumentError */
export function checkDurationMs(value: unknown, what: string, min = 1, why?: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > MAX_DURATION_MS) {
    const reason = why === undefined ? '' : ` (${why})`;
    throw new InvalidArgumentError(`${what} must be an integer number of ms from ${min} to ${MAX_DURATION_MS}${reason}, got ${describeValue(value)}`);
  }
  return value;
}

export function checkSignal(value: unknown, what = 'signal'): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof AbortSignal)) {
    throw new InvalidArgumentError(`${what} must be an AbortSignal, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * The options' own enumerable properties, copied once into an object without a prototype: an option inherited (from a polluted
 * `Object.prototype`, or `{ __proto__: { leaseMs: 5 } }`) is not one, and a getter is read once.
 */
export function checkOptionsObject(value: unknown, what: string): Record<string, unknown> {
  if (value === undefined) return Object.create(null) as Record<string, unknown>;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidArgumentError(`${what} must be an object, got ${describeValue(value)}`);
  }
  return Object.assign(Object.create(null) as Record<string, unknown>, value);
}

/** Whether `text` has no lone surrogate (`String.prototype.isWellFormed`, Node ≥ 20; the ES2022 lib does not type it). */
export function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

/**
 * A string rlock sends to Redis as a key part or an id: non-empty, well-formed Unicode (a lone surrogate goes out as U+FFFD, so
 * `'\uD800'`, `'\uDC00'` and `'\uFFFD'` would be one key), at most `maxBytes` UTF-8 bytes.
 * @throws InvalidArgumentError
 */
export function checkRedisString(value: unknown, what: string, maxBytes: number): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new InvalidArgumentError(`${what} must be a non-empty string, got ${describeValue(value)}`);
  }
  if (!isWellFormed(value)) {
    throw new InvalidArgumentError(`${what} must be well-formed Unicode (a lone surrogate would reach Redis as U+FFFD), got ${describeValue(value)}`);
  }
  if (Buffer.byteLength(value, 'utf8') > maxBytes) {
    throw new InvalidArgumentError(`${what} must be at most ${maxBytes} bytes in UTF-8`);
  }
  return value;
}

/** Refuses unknown option names, so a typo such as `leaseMS` fails instead of taking the default. */
export function checkKnownKeys(options: Record<string, unknown>, known: readonly string[], what: string): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new InvalidArgumentError(`${what}: unknown option "${key}" (known: ${known.join(', ')})`);
    }
  }
}

/** `value`, typed as the function `F` it must be (what it returns is checked where it is called). @throws InvalidArgumentError */
export function checkFunction<F>(value: unknown, what: string): F {
  if (typeof value !== 'function') throw new InvalidArgumentError(`${what} must be a function, got ${describeValue(value)}`);
  return value as F;
}

export function checkBoolean(value: unknown, what: string): boolean {
  if (typeof value !== 'boolean') throw new InvalidArgumentError(`${what} must be true or false, got ${describeValue(value)}`);
  return value;
}

/** A short, safe description of a bad value for an error message: quoted and escaped, a URL without its password. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return redactUrls(JSON.stringify(value));
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? `an object (${value.constructor?.name ?? 'Object'})` : typeof value;
}
