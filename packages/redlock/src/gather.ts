/** The outcome of one master's call: its value or its error; undefined while it runs. */
export type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: Error };

export interface Gathered<T, V> {
  /** What `decide` answered, or undefined if it never did before every call settled. */
  readonly verdict: V | undefined;
  /** One entry per call, undefined for calls still running when the verdict came. */
  readonly results: readonly (Settled<T> | undefined)[];
}

/**
 * Starts every call at once and resolves as soon as `decide` reaches a verdict
 * on the results so far (so a frozen master does not hold up an answer the
 * others already settle), or when every call has settled. Calls are bounded
 * by their own timeouts; the ones still running keep running.
 */
export function gather<T, V>(
  calls: readonly (() => Promise<T>)[],
  decide: (results: readonly (Settled<T> | undefined)[], settled: number) => V | undefined,
): Promise<Gathered<T, V>> {
  const results: (Settled<T> | undefined)[] = calls.map(() => undefined);
  let settled = 0;
  return new Promise((resolve) => {
    let done = false;
    calls.forEach(async (call, index) => {
      let result: Settled<T>;
      try {
        result = { ok: true, value: await call() };
      } catch (error) {
        result = { ok: false, error: error instanceof Error ? error : new Error(String(error)) };
      }
      results[index] = result;
      settled++;
      if (!done) {
        const verdict = decide(results, settled);
        if (verdict !== undefined || settled === calls.length) {
          done = true;
          resolve({ verdict, results: [...results] });
        }
      }
    });
    if (calls.length === 0) resolve({ verdict: decide(results, 0), results });
  });
}
