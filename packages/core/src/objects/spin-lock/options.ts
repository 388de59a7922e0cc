import { InvalidArgumentError } from '../../errors.js';
import { checkDurationMs, checkKnownKeys, checkOptionsObject, describeValue } from '../../checks/argument-checks.js';
import { BackoffWait } from '../../engine/wait-with-backoff.js';

/** How a spin lock backs off while it waits (`getSpinLock(name, options)`); its calls take the lock's options. */
export interface SpinLockOptions {
  /** The first wait after a refusal is at most twice this, ms (1 to 2^31−1); no wait is shorter. @default 1 */
  readonly initialDelayMs?: number;
  /** The longest wait between two tries, ms (at least initialDelayMs, up to 2^31−1). @default 128 */
  readonly maxDelayMs?: number;
  /** How much the ceiling of the wait grows per refusal (1 to 16; 1: a fixed ceiling). @default 2 */
  readonly multiplier?: number;
}

/** The defaults of {@link SpinLockOptions}, in one frozen object (Redisson's spin lock backs off alike). */
export const SPIN_LOCK_DEFAULTS = Object.freeze({
  /** The first wait after a refusal is at most twice 1 ms. */
  initialDelayMs: 1,
  /** No wait between two tries is longer than 128 ms. */
  maxDelayMs: 128,
  /** The ceiling of the wait doubles per refusal. */
  multiplier: 2,
});

const KNOWN = Object.freeze(Object.keys(SPIN_LOCK_DEFAULTS));

/** The largest multiplier: beyond it the ceiling reaches any cap within a few refusals anyway. */
const MAX_MULTIPLIER = 16;

/** The back-off plan of `options`, checked before anything is sent. @throws InvalidArgumentError */
export function spinBackoff(options: SpinLockOptions | undefined): BackoffWait {
  const given = checkOptionsObject(options, 'spin lock options');
  checkKnownKeys(given, KNOWN, 'spin lock options');
  const initialDelayMs = given.initialDelayMs === undefined ? SPIN_LOCK_DEFAULTS.initialDelayMs : checkDurationMs(given.initialDelayMs, 'initialDelayMs');
  const maxDelayMs =
    given.maxDelayMs === undefined
      ? Math.max(SPIN_LOCK_DEFAULTS.maxDelayMs, initialDelayMs)
      : checkDurationMs(given.maxDelayMs, 'maxDelayMs', initialDelayMs, 'at least initialDelayMs');
  const multiplier = given.multiplier ?? SPIN_LOCK_DEFAULTS.multiplier;
  if (typeof multiplier !== 'number' || !Number.isFinite(multiplier) || multiplier < 1 || multiplier > MAX_MULTIPLIER) {
    throw new InvalidArgumentError(`multiplier must be a number from 1 to ${MAX_MULTIPLIER}, got ${describeValue(multiplier)}`);
  }
  return new BackoffWait(initialDelayMs, maxDelayMs, multiplier);
}
