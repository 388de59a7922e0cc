/** The code of rlock's process warning for a task that ended still holding a lock. */
const HOLD_LEAKED = 'RLOCK_HOLD_LEAKED';

/** One `RLOCK_HOLD_LEAKED` process warning: a task ended still holding a lock. */
export interface HoldLeakWarning {
  /** The lock's name, as the warning quotes it. */
  readonly name: string;
  /** How many acquisitions the task left behind. */
  readonly count: number;
  /** The warning's text. */
  readonly message: string;
}

let captured: HoldLeakWarning[] | undefined;

/**
 * From now on this process's `RLOCK_HOLD_LEAKED` warnings are kept for {@link takeHoldLeakWarnings} instead of
 * printed; other warnings pass through. Installed once per process (a jest test file's `process`); idempotent.
 * A test that leaks a hold on purpose asserts what it left, so a leak nobody expected stands out.
 */
export function captureHoldLeakWarnings(): void {
  if (captured !== undefined) return;
  const kept: HoldLeakWarning[] = (captured = []);
  const emit = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  process.emitWarning = (warning: string | Error, ...rest: unknown[]): void => {
    // emitWarning(warning, { code }) or the older emitWarning(warning, type, code).
    const options = rest[0];
    const code = typeof options === 'object' && options !== null ? (options as { code?: unknown }).code : rest[1];
    if (code !== HOLD_LEAKED) return emit(warning, ...rest);
    const message = typeof warning === 'string' ? warning : warning.message;
    const match = /ended still holding "(.*)" \((\d+) acquisitions?,/s.exec(message);
    kept.push({ name: match?.[1] ?? '', count: Number(match?.[2] ?? 0), message });
  };
}

/** The `RLOCK_HOLD_LEAKED` warnings kept since the last call, oldest first; empty unless {@link captureHoldLeakWarnings} ran. */
export function takeHoldLeakWarnings(): HoldLeakWarning[] {
  return captured?.splice(0) ?? [];
}
