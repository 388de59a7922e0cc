/** Something that must be torn down synchronously when the process exits. */
export interface ExitCleanup {
  /** Runs inside process 'exit': synchronous work only (signals, rmSync). */
  onProcessExit(): void;
}

const live = new Set<ExitCleanup>();

function runAll(): void {
  for (const entry of live) {
    try {
      entry.onProcessExit();
    } catch {
      // Best effort: the supervisor still kills the server once our pipe closes.
    }
  }
}

/**
 * Registers `entry` to run on process 'exit'. The listener is installed only
 * while something is registered, so test files that stop their fleets leave
 * no listener behind on a long-lived jest worker.
 */
export function registerExitCleanup(entry: ExitCleanup): void {
  if (live.size === 0) process.on('exit', runAll);
  live.add(entry);
}

/** Undoes {@link registerExitCleanup}; unknown entries are ignored. */
export function unregisterExitCleanup(entry: ExitCleanup): void {
  if (!live.delete(entry)) return;
  if (live.size === 0) process.removeListener('exit', runAll);
}
