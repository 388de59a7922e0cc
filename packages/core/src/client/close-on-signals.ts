import { withinMs } from '../connection/bounded-call.js';
import { InvalidArgumentError } from '../errors.js';
import { checkDurationMs, checkKnownKeys, checkOptionsObject, describeValue } from '../checks/argument-checks.js';

/** Options of `client.closeOnSignals(options)`. */
export interface CloseOnSignalsOptions {
  /** The signals that close the client (the first to arrive does); not SIGKILL or SIGSTOP. @default ['SIGTERM', 'SIGINT'] */
  readonly signals?: readonly NodeJS.Signals[];
  /** How long the close may take before the signal is raised again, in ms (below the orchestrator's grace period). @default 10_000 */
  readonly timeoutMs?: number;
}

/** The defaults of {@link CloseOnSignalsOptions}, in one frozen object. */
export const CLOSE_ON_SIGNALS_DEFAULTS = Object.freeze({
  /** What orchestrators (SIGTERM) and terminals (SIGINT, Ctrl-C) send. */
  signals: Object.freeze(['SIGTERM', 'SIGINT'] as const),
  /** Two command timeouts and then some, within common grace periods (Kubernetes: 30 s). */
  timeoutMs: 10_000,
});

/**
 * On the first of `signals`, runs `close` bounded by `timeoutMs`, then re-raises the signal if nobody else listens; returns the remover.
 * @throws InvalidArgumentError for a bad option, before any listener is added.
 */
export function closeOnSignals(close: () => Promise<unknown>, options?: CloseOnSignalsOptions): () => void {
  const raw = checkOptionsObject(options, 'closeOnSignals() options');
  checkKnownKeys(raw, ['signals', 'timeoutMs'], 'closeOnSignals() options');
  const signals = checkSignals(raw.signals);
  const timeoutMs = raw.timeoutMs === undefined ? CLOSE_ON_SIGNALS_DEFAULTS.timeoutMs : checkDurationMs(raw.timeoutMs, 'closeOnSignals(): timeoutMs');
  let removed = false;
  const remove = (): void => {
    removed = true;
    for (const signal of signals) process.removeListener(signal, onSignal);
  };
  function onSignal(signal: NodeJS.Signals): void {
    if (removed) return;
    // Counted before removal: the process's own listeners, which run beside the close.
    const others = process.listeners(signal).filter((listener) => listener !== onSignal).length;
    remove();
    // A close() that throws rejects like one that rejects.
    const closing = new Promise<unknown>((resolve) => resolve(close()));
    void withinMs(closing, timeoutMs, () => undefined)
      .catch(() => undefined)
      .then(() => {
        if (others === 0 && process.listenerCount(signal) === 0) process.kill(process.pid, signal);
      });
  }
  for (const signal of signals) process.prependListener(signal, onSignal);
  return remove;
}

function checkSignals(value: unknown): readonly NodeJS.Signals[] {
  if (value === undefined) return CLOSE_ON_SIGNALS_DEFAULTS.signals;
  const valid =
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((signal) => typeof signal === 'string' && /^SIG[A-Z0-9]+$/.test(signal) && signal !== 'SIGKILL' && signal !== 'SIGSTOP');
  if (!valid) {
    throw new InvalidArgumentError(
      `closeOnSignals(): signals must be a non-empty array of signal names such as 'SIGTERM' (not SIGKILL or SIGSTOP), got ${describeValue(value)}`,
    );
  }
  return [...new Set(value as NodeJS.Signals[])];
}
