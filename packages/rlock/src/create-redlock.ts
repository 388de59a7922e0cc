import { RedlockClient, resolveRedlockOptions, type RedlockClientOptions } from '@org/rlock-redlock';
import type { WatchdogOptions } from '@org/rlock-watchdog';
import { wireWatchdog } from './wire-watchdog.js';

/** Options of {@link createRedlock}: the Redlock client's options, with the watchdog wired in. */
export interface RedlockOptions extends Omit<RedlockClientOptions, 'renewer'> {
  /** Tuning of the lease renewer (retry delays, tick coalescing). @default WATCHDOG_DEFAULTS */
  readonly watchdog?: WatchdogOptions;
}

/**
 * Creates a Redlock client over independent masters; holds without `leaseMs`
 * are renewed by the watchdog and kept only while a majority renews them.
 * Checks every option at once.
 *
 * @throws InvalidArgumentError for bad options, before connecting.
 * @example
 * const redlock = createRedlock({ masters: ['redis://10.0.0.1:6379', 'redis://10.0.0.2:6379', 'redis://10.0.0.3:6379'] });
 * await redlock.getLock('report:daily').withLock(async ({ signal }) => { … });
 * await redlock.close();
 */
export function createRedlock(options: RedlockOptions): RedlockClient {
  return wireWatchdog(
    'createRedlock',
    options,
    (rest) => resolveRedlockOptions(rest),
    (resolved) => new RedlockClient(resolved),
  );
}
