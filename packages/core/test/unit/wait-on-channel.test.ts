import { jest } from '@jest/globals';
import { acquireObserved } from '../../src/engine/acquire.js';
import type { TryOutcome } from '../../src/engine/attempt.js';
import { EngineContext } from '../../src/engine/engine-context.js';
import { WaitQueues } from '../../src/engine/wait-queue.js';
import type { WaitSpec } from '../../src/engine/wait-call.js';

const LABEL = { object: 'lock', refusal: 'timeout' } as const;

describe('waiting on a channel', () => {
  const RealAbortController = globalThis.AbortController;
  let controllersMade = 0;
  beforeEach(() => {
    jest.useFakeTimers({ now: 0 });
    globalThis.AbortController = class extends RealAbortController {
      constructor() {
        super();
        controllersMade++;
      }
    };
  });
  afterEach(() => {
    globalThis.AbortController = RealAbortController;
    jest.useRealTimers();
  });

  /** A client's context whose subscriptions are acknowledged at once, and a waiting call its tries refuse (counted). */
  function setUp(): { ctx: EngineContext; queues: WaitQueues; spec: () => WaitSpec<string>; tries: () => number } {
    const queues = new WaitQueues(() => ({ ready: Promise.resolve(), close: () => undefined }));
    const reports = {
      watchesLosses: () => false,
      acquired: () => undefined,
      released: () => undefined,
      lost: () => undefined,
      backgroundError: () => undefined,
    };
    const ctx = new EngineContext({ clientId: 'c', keyPrefix: 'p', watchdogTimeoutMs: 30_000, commandTimeoutMs: 1_000 }, queues, reports);
    let tries = 0;
    const spec = (): WaitSpec<string> => ({
      name: 'n',
      channel: 'ch',
      id: 'o',
      headOnly: false,
      exclusive: true,
      onMessage: () => true,
      arrival: 'queue',
      queuesOthers: true,
      waitMs: 5_000,
      signal: undefined,
      // Refused, the holder's lease running past waitMs: no timed try is due before then.
      tryOnce: (): Promise<TryOutcome<string>> => (tries++, Promise.resolve({ retryInMs: 60_000 })),
    });
    // Counted from here: the context's own are not the calls'.
    controllersMade = 0;
    return { ctx, queues, spec, tries: () => tries };
  }

  it('makes no AbortController for a call queued behind its client until it tries, and ends it at waitMs with no try', async () => {
    const { ctx, queues, spec, tries } = setUp();
    const first = acquireObserved(ctx, spec(), LABEL);
    await jest.advanceTimersByTimeAsync(1);
    // The first call's try, and its try again once subscribed; the rest queue behind it and sleep.
    expect([tries(), controllersMade]).toEqual([2, 1]);
    const calls = [first, ...Array.from({ length: 999 }, () => acquireObserved(ctx, spec(), LABEL))];
    await jest.advanceTimersByTimeAsync(10);
    expect(queues.get('ch')?.waiters).toHaveLength(1_000);
    expect([tries(), controllersMade]).toEqual([2, 1]);
    await jest.advanceTimersByTimeAsync(4_990);
    await expect(Promise.all(calls)).resolves.toEqual(calls.map(() => undefined));
    expect([tries(), controllersMade]).toEqual([2, 1]);
    expect(queues.hasWaiters('ch')).toBe(false);
  });

  it('sends no try when a sleeping waiter is woken by its own timer at waitMs, which may fire a fraction of a ms early', async () => {
    jest.useRealTimers();
    // The timers' clock runs ahead of performance.now(): each timer fires early by it.
    jest.useFakeTimers({ doNotFake: ['performance'] });
    const { ctx, queues, spec, tries } = setUp();
    const calls = [acquireObserved(ctx, spec(), LABEL)];
    await jest.advanceTimersByTimeAsync(1);
    calls.push(...Array.from({ length: 99 }, () => acquireObserved(ctx, spec(), LABEL)));
    await jest.advanceTimersByTimeAsync(10);
    expect(tries()).toBe(2);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(tries()).toBe(2);
    queues.close(new Error('closed'));
    await Promise.allSettled(calls);
  });
});
