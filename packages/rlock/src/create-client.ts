import { RLockClient, type RLockClientOptions } from '@org/rlock-core';
import { resolveClientOptions } from '@org/rlock-core/internal';
import type { WatchdogOptions } from '@org/rlock-watchdog';
import { wireWatchdog } from './wire-watchdog.js';

/** Options of {@link createClient}: the core client's options, with the watchdog wired in. */
export interface ClientOptions extends Omit<RLockClientOptions, 'renewer'> {
  /** Tuning of the lease renewer (retry delays, tick coalescing). @default WATCHDOG_DEFAULTS */
  readonly watchdog?: WatchdogOptions;
}

/**
 * Creates a client whose holds taken without `leaseMs` are kept alive by the
 * watchdog (renewed every `watchdogTimeoutMs / 3`). Checks every option at once.
 *
 * @throws InvalidArgumentError for bad options, before connecting.
 * @example
 * const client = createClient({ redis: 'redis://127.0.0.1:6379' });
 * await client.getLock('order:42').withLock(async ({ signal, token }) => { … });
 */
export function createClient(options: ClientOptions): RLockClient {
  return wireWatchdog('createClient', options, resolveClientOptions, (resolved) => new RLockClient(resolved));
}
