import type { DelayQueue } from './delay-queue.js';

/** The outcome of one call of a {@link gather}: its value or its error. */
export type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: Error };

export interface Gathered<T, V> {
  /** What `decide` answered, or undefined if it never did before every call settled. */
  readonly verdict: V | undefined;
  /** One entry per call, undefined for calls still running when the verdict came. */
  readonly results: readonly (Settled<T> | undefined)[];
}

/** A per-call bound on a gather: past `ms`, calls still out count as failed with `error(index)`. */
export interface GatherTimeout {
  readonly ms: number;
  readonly error: (index: number) => Error;
}

/** The calls at `first` start first, the others once those settle without a verdict or `afterMs` later; after a verdict, only if `skip()` is false. */
export interface GatherStagger {
  readonly first: readonly number[];
  readonly afterMs: number;
  skip(): boolean;
  /** Where the later starts wait: one timer for a client's gathers, since a timer each would cost more than a round's own work. */
  readonly timers: DelayQueue;
}

/** A fan-out (Redlock's masters) resolved at `decide`'s verdict, so a frozen server cannot hold up an answer; `late` hears calls still running. */
export function gather<T, V>(
  calls: readonly (() => Promise<T>)[],
  decide: (results: readonly (Settled<T> | undefined)[], settled: number) => V | undefined,
  timeout?: GatherTimeout,
  late?: (index: number, result: Settled<T>) => void,
  stagger?: GatherStagger,
): Promise<Gathered<T, V>> {
  const results: (Settled<T> | undefined)[] = new Array<undefined>(calls.length).fill(undefined);
  let settled = 0;
  let done = false;
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const finish = (verdict: V | undefined): void => {
      done = true;
      if (timer) clearTimeout(timer);
      resolve({ verdict, results: [...results] });
    };
    const record = (index: number, result: Settled<T>): void => {
      if (done) return late?.(index, result);
      results[index] = result;
      const verdict = decide(results, ++settled);
      if (verdict !== undefined || settled === calls.length) finish(verdict);
      else if (stagger && settled === stagger.first.length && !startedRest) startRest();
    };
    const start = (index: number): void => {
      let call: Promise<T>;
      try {
        call = (calls[index] as () => Promise<T>)();
      } catch (error) {
        call = Promise.reject(error); // a later start runs on a timer: a throw there would escape
      }
      call.then(
        (value) => record(index, { ok: true, value }),
        (error: unknown) => record(index, { ok: false, error: error instanceof Error ? error : new Error(String(error)) }),
      );
    };
    let startedRest = false;
    const startRest = (): void => {
      if (startedRest || (done && stagger?.skip())) return;
      startedRest = true;
      calls.forEach((_, index) => stagger?.first.includes(index) || start(index));
    };
    if (stagger) {
      stagger.first.forEach(start);
      stagger.timers.add(stagger.afterMs, startRest);
    } else calls.forEach((_, index) => start(index));
    if (calls.length === 0) finish(decide(results, 0));
    else if (timeout && !done) {
      // Deferred a turn of the loop: a reply already read wins (see withinMs).
      timer = setTimeout(
        () =>
          setImmediate(() => {
            if (done) return;
            results.forEach((result, index) => (results[index] = result ?? { ok: false, error: timeout.error(index) }));
            finish(decide(results, (settled = calls.length)));
          }),
        timeout.ms,
      ).unref();
    }
  });
}
