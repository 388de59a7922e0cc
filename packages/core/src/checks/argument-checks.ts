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

export function checkOptionsObject(value: unknown, what: string): Record<string, unknown> {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidArgumentError(`${what} must be an object, got ${describeValue(value)}`);
  }
  return value as Record<string, unknown>;
}

/** Refuses unknown option names, so a typo such as `leaseMS` fails instead of taking the default. */
export function checkKnownKeys(options: Record<string, unknown>, known: readonly string[], what: string): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new InvalidArgumentError(`${what}: unknown option "${key}" (known: ${known.join(', ')})`);
    }
  }
}

export function checkFunction(value: unknown, what: string): void {
  if (typeof value !== 'function') throw new InvalidArgumentError(`${what} must be a function, got ${describeValue(value)}`);
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
