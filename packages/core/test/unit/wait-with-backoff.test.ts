import { describe, expect, it, jest } from '@jest/globals';
import { acquireObserved } from '../../src/engine/acquire.js';
import type { TryOutcome } from '../../src/engine/attempt.js';
import { EngineContext } from '../../src/engine/engine-context.js';
import { WaitQueues } from '../../src/engine/wait-queue.js';
import type { WaitSpec } from '../../src/engine/wait-call.js';
import { BackoffWait } from '../../src/engine/wait-with-backoff.js';
import { ClientClosedError } from '../../src/errors.js';

const PLAN = new BackoffWait(1, 128, 2);
const LABEL = { object: 'spin_lock', refusal: 'timeout' } as const;

/** A context whose queues count the subscriptions they make. */
function context(): { ctx: EngineContext; subscriptions: () => number } {
  let subscribed = 0;
  const queues = new WaitQueues(() => {
    subscribed++;
    return { ready: Promise.resolve(), close: () => undefined };
  });
  const reports = { watchesLosses: () => false, acquired: () => undefined, released: () => undefined, lost: () => undefined, backgroundError: () => undefined };
  const ctx = new EngineContext({ clientId: 'c', keyPrefix: 'p', watchdogTimeoutMs: 30_000, commandTimeoutMs: 1_000 }, queues, reports);
  return { ctx, subscriptions: () => subscribed };
}

/** A back-off wait whose tries are refused (the holder's TTL `ttlMs`) until the `grantAt`-th, which grants 'g'. */
function spec(grantAt: number, options: { waitMs?: number; signal?: AbortSignal; ttlMs?: number } = {}): WaitSpec<string> & { tries: number[] } {
  const tries: number[] = [];
  return {
    name: 'n',
    channel: 'ch',
    strategy: PLAN,
    id: 'o',
    headOnly: false,
    onMessage: () => true,
    arrival: 'queue',
    queuesOthers: true,
    waitMs: options.waitMs,
    signal: options.signal,
    tries,
    tryOnce: async (): Promise<TryOutcome<string>> => {
      tries.push(Date.now());
      return tries.length >= grantAt ? { grant: 'g' } : { retryInMs: options.ttlMs ?? 60_000 };
    },
  };
}

describe('waiting by back-off', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  it('tries again after growing, jittered sleeps, never subscribing or queueing locally', async () => {
    const { ctx, subscriptions } = context();
    const waiting = spec(10);
    const granted = acquireObserved(ctx, waiting, LABEL);
    await jest.advanceTimersByTimeAsync(2_000);
    await expect(granted).resolves.toBe('g');
    expect(waiting.tries).toHaveLength(10);
    const sleeps = waiting.tries.slice(1).map((at, i) => at - (waiting.tries[i] as number));
    // The n-th sleep lies in [b / 2, b], b = min(128, 2^n) (a timer fires on the whole ms after).
    sleeps.forEach((sleep, i) => {
      const ceiling = Math.min(128, 2 ** (i + 1));
      expect(sleep).toBeGreaterThanOrEqual(Math.max(1, Math.floor(ceiling / 2)));
      expect(sleep).toBeLessThanOrEqual(ceiling + 1);
    });
    expect(subscriptions()).toBe(0);
    expect(ctx.queues.hasWaiters('ch')).toBe(false);
  });

  it('sleeps no later than the holder’s lease runs out', async () => {
    const { ctx } = context();
    const waiting = spec(3, { ttlMs: 5 });
    const granted = acquireObserved(ctx, { ...waiting, strategy: new BackoffWait(1_000, 1_000, 2) }, LABEL);
    await jest.advanceTimersByTimeAsync(20);
    await expect(granted).resolves.toBe('g');
  });

  it('ends by waitMs, and at once when the signal aborts or the client closes', async () => {
    const { ctx } = context();
    const slow = new BackoffWait(60_000, 60_000, 2);
    const timedOut = acquireObserved(ctx, { ...spec(Infinity, { waitMs: 100 }), strategy: slow }, LABEL);
    const outcome = expect(timedOut).resolves.toBeUndefined();
    await jest.advanceTimersByTimeAsync(100);
    await outcome;

    const controller = new AbortController();
    const aborted = acquireObserved(ctx, { ...spec(Infinity, { signal: controller.signal }), strategy: slow }, LABEL);
    await jest.advanceTimersByTimeAsync(1);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);

    const closed = acquireObserved(ctx, { ...spec(Infinity), strategy: slow }, LABEL);
    await jest.advanceTimersByTimeAsync(1);
    ctx.closed = true;
    ctx.queues.close(new ClientClosedError());
    await expect(closed).rejects.toBeInstanceOf(ClientClosedError);
  });
});
