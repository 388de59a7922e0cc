/**
 * Shared setup of the Watchdog unit tests: jest's fake timers (which also fake
 * performance.now()) and a watchdog wired to the fakes, closed after each test.
 */
import { afterEach, beforeEach, jest } from '@jest/globals';
import { Watchdog, type WatchdogOptions } from '@org/rlock-watchdog';
import { FakeBackend, FakeReporter } from './renewal-fakes.js';

export interface Harness {
  backend: FakeBackend;
  reporter: FakeReporter;
  watchdog: Watchdog;
}

/** Installs fake timers around each test and returns a factory of wired watchdogs. */
export function useWatchdogHarness(): (options?: WatchdogOptions, maxBatch?: number) => Harness {
  const open: Harness[] = [];
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(async () => {
    // Close first, so that answering the calls still pending changes nothing,
    // then answer them, so that close() can resolve.
    const harnesses = open.splice(0);
    const closing = harnesses.map(({ watchdog }) => watchdog.close());
    for (const { backend } of harnesses) {
      for (const call of backend.pending()) call.reject(new Error('test over'));
    }
    await Promise.all(closing);
    jest.useRealTimers();
    jest.restoreAllMocks();
  });
  return (options, maxBatch = 100) => {
    const backend = new FakeBackend();
    backend.maxBatch = maxBatch;
    const reporter = new FakeReporter();
    const watchdog = new Watchdog(backend, reporter, options);
    open.push({ backend, reporter, watchdog });
    return { backend, reporter, watchdog };
  };
}

/** Lets pending promise callbacks run without moving the clock. */
export async function flush(): Promise<void> {
  await jest.advanceTimersByTimeAsync(0);
}

/** Moves the fake clock by `ms`, firing timers and running promise callbacks on the way. */
export async function advance(ms: number): Promise<void> {
  await jest.advanceTimersByTimeAsync(ms);
}
