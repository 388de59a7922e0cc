import type { LeaseRenewerFactory } from '@org/rlock-core/internal';
import { Watchdog } from './watchdog.js';
import { resolveWatchdogOptions, type WatchdogOptions } from './watchdog-options.js';

/**
 * Makes the renewer factory a client takes: each client that calls it gets its own
 * {@link Watchdog} (one timer per client). The options are checked here, once, so a
 * bad option fails when the client is created.
 * @throws InvalidArgumentError on a bad option (see {@link WatchdogOptions}).
 * @example
 * ```ts
 * import { createWatchdog } from '@org/rlock-watchdog';
 * const renewerFactory = createWatchdog({ maxRetryDelayMs: 500 });
 * const renewer = renewerFactory(backend, reporter); // done by the client
 * ```
 */
export function createWatchdog(options?: WatchdogOptions): LeaseRenewerFactory {
  const resolved = resolveWatchdogOptions(options);
  return (backend, reporter) => new Watchdog(backend, reporter, resolved);
}
