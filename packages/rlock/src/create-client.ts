import { InvalidArgumentError, RLockClient, type RLockClientOptions } from '@org/rlock-core';
import { createWatchdog, type WatchdogOptions } from '@org/rlock-watchdog';

/** Options of {@link createClient}: the core client's options, with the watchdog wired in. */
export interface ClientOptions extends Omit<RLockClientOptions, 'renewer'> {
  /** Tuning of the lease renewer (retry delays, tick coalescing). @default WATCHDOG_DEFAULTS */
  readonly watchdog?: WatchdogOptions;
}

/**
 * Creates a client whose holds taken without `leaseMs` are kept alive by the
 * watchdog (renewed every `watchdogTimeoutMs / 3`). Checks every option at once.
 *
 * @throws InvalidArgumentError for a bad option, before connecting.
 * @example
 * const client = createClient({ redis: 'redis://127.0.0.1:6379' });
 * await client.getLock('order:42').withLock(async ({ signal, token }) => { … });
 */
export function createClient(options: ClientOptions): RLockClient {
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError('createClient: options are required (at least { redis })');
  }
  if ('renewer' in options) {
    throw new InvalidArgumentError('createClient: unknown option "renewer" (the watchdog is wired in; tune it with "watchdog")');
  }
  const { watchdog, ...clientOptions } = options;
  return new RLockClient({ ...clientOptions, renewer: createWatchdog(watchdog) });
}
