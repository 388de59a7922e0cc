import { InvalidArgumentError } from '@org/rlock-core';
import { describeValue, type LeaseRenewerFactory } from '@org/rlock-core/internal';
import { createWatchdog, type WatchdogOptions } from '@org/rlock-watchdog';

/** Builds the client with the watchdog as its renewer; every bad option (either's) in one InvalidArgumentError. */
export function wireWatchdog<O extends { readonly watchdog?: WatchdogOptions }, C>(
  what: string,
  options: O,
  /** Checks the client's options without connecting. */
  check: (options: Omit<O, 'watchdog'>) => unknown,
  build: (options: Omit<O, 'watchdog'> & { renewer: LeaseRenewerFactory }) => C,
): C {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError(`${what}: options are required, got ${describeValue(options)}`);
  }
  // Own properties only, as every option rlock reads: the rest spread copies only those.
  const { watchdog: _own, ...rest } = options;
  const watchdog = Object.hasOwn(options, 'watchdog') ? options.watchdog : undefined;
  const problems: string[] = [];
  if (Object.hasOwn(options, 'renewer')) problems.push('unknown option "renewer" (the watchdog is wired in; tune it with "watchdog")');
  let renewer: LeaseRenewerFactory | undefined;
  try {
    renewer = createWatchdog(watchdog);
  } catch (error) {
    problems.push((error as Error).message);
  }
  try {
    check(rest);
  } catch (error) {
    problems.push((error as Error).message.replace(/^[^:]*: (\d+ )?bad options?: /, ''));
  }
  if (problems.length > 0 || !renewer) throw new InvalidArgumentError(`${what}: ${problems.join('; ')}`);
  return build({ ...rest, renewer });
}
