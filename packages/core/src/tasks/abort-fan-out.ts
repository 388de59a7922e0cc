/**
 * One `abort` listener on a caller's signal, however many of rlock's calls wait on it. A service that passes one shutdown signal
 * to every `lock()` would otherwise put a listener per waiting call on it, and past Node's EventTarget limit (10) the process
 * warns of a leak in the caller's own signal (MaxListenersExceededWarning).
 */
class AbortFanOut {
  private readonly callbacks = new Set<{ readonly run: () => void }>();
  private readonly abort = (): void => {
    fanOuts.delete(this.signal);
    for (const entry of this.callbacks) {
      // As an EventTarget does with a listener that throws: the others still run, and the error is reported, not swallowed.
      try {
        entry.run();
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  };

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener('abort', this.abort, { once: true });
    fanOuts.set(signal, this);
  }

  add(run: () => void): () => void {
    const entry = { run };
    this.callbacks.add(entry);
    return () => {
      this.callbacks.delete(entry);
      // The last wait on the signal ended: it keeps no listener of rlock's.
      if (this.callbacks.size === 0 && fanOuts.get(this.signal) === this) {
        fanOuts.delete(this.signal);
        this.signal.removeEventListener('abort', this.abort);
      }
    };
  }
}

const fanOuts = new WeakMap<AbortSignal, AbortFanOut>();

/** Runs `callback` once when `signal` aborts; the function returned stops that (call it when the wait ends). */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  return (fanOuts.get(signal) ?? new AbortFanOut(signal)).add(callback);
}
