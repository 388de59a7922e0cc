import { InvalidArgumentError } from '@org/rlock-core';
import { describeValue } from '@org/rlock-core/engine';
import { createWatchdog, type WatchdogOptions } from '@org/rlock-watchdog';
import { RedlockClient } from './redlock-client.js';
import { resolveRedlockOptions, type RedlockClientOptions } from './options.js';

/** Options of {@link createRedlock}: the Redlock client's options, with the watchdog wired in. */
export interface RedlockOptions extends Omit<RedlockClientOptions, 'renewer'> {
  /** Tuning of the lease renewer (retry delays, tick coalescing). @default WATCHDOG_DEFAULTS */
  readonly watchdog?: WatchdogOptions;
}

/**
 * Creates a Redlock client over independent masters whose holds taken without
 * `leaseMs` are kept alive by the watchdog, renewed on every master every
 * `watchdogTimeoutMs / 3` and kept only while a majority renews them. Checks
 * every option at once and reports all problems in one error.
 *
 * @throws InvalidArgumentError for bad options, before connecting.
 * @example
 * const redlock = createRedlock({ masters: ['redis://10.0.0.1:6379', 'redis://10.0.0.2:6379', 'redis://10.0.0.3:6379'] });
 * await redlock.getLock('report:daily').withLock(async ({ signal }) => { … });
 * await redlock.close();
 */
export function createRedlock(options: RedlockOptions): RedlockClient {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError(`createRedlock: options are required (at least { masters }), got ${describeValue(options)}`);
  }
  const { watchdog, ...rest } = options;
  const problems: string[] = [];
  if ('renewer' in options) problems.push('unknown option "renewer" (the watchdog is wired in; tune it with "watchdog")');
  let renewer;
  try {
    renewer = createWatchdog(watchdog);
  } catch (error) {
    problems.push((error as Error).message);
  }
  try {
    resolveRedlockOptions({ ...rest }, 'createRedlock');
  } catch (error) {
    problems.push((error as Error).message.replace(/^createRedlock: (\d+ )?bad options?: /, ''));
  }
  if (problems.length > 0) throw new InvalidArgumentError(`createRedlock: ${problems.join('; ')}`);
  return new RedlockClient({ ...rest, renewer });
}
