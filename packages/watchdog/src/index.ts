/**
 * `@org/rlock-watchdog`: the renewal scheduler that keeps rlock's watchdog leases
 * alive. It implements core's `LeaseRenewer` seam.
 *
 * @module @org/rlock-watchdog
 */
export { createWatchdog } from './create-watchdog.js';
export { Watchdog } from './watchdog.js';
export { WATCHDOG_DEFAULTS } from './watchdog-options.js';
export type { WatchdogOptions } from './watchdog-options.js';
