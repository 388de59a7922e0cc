import { jest } from '@jest/globals';
import type { TryOutcome } from '../../src/engine/attempt.js';
import { WaitCall, type WaitSpec } from '../../src/engine/wait-call.js';
import { EngineContext } from '../../src/engine/engine-context.js';
import { WaitQueues } from '../../src/engine/wait-queue.js';
import { LockLostError } from '../../src/errors.js';

function spec(waitMs: number | undefined, signal?: AbortSignal): WaitSpec<string> {
  return {
    name: 'n',
    channel: 'ch',
    id: 'o',
    headOnly: false,
    onMessage: () => true,
    arrival: 'queue',
    waitMs,
    signal,
    tryOnce: (): Promise<TryOutcome<string>> => Promise.resolve({ retryInMs: 10 }),
  };
}

const reports = { watchesLosses: () => false, acquired: () => undefined, released: () => undefined, lost: () => undefined, backgroundError: () => undefined };
const queues = new WaitQueues(() => ({ ready: Promise.resolve(), close: () => undefined }));
const ctx = new EngineContext({ clientId: 'c', keyPrefix: 'p', watchdogTimeoutMs: 30_000, commandTimeoutMs: 1_000 }, queues, reports);

describe('WaitCall', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('makes no timer for waitMs until its signal is asked for: thousands deferred behind their client cost none', () => {
    const calls = Array.from({ length: 1_000 }, () => new WaitCall(ctx, spec(60_000)));
    expect(jest.getTimerCount()).toBe(0);
    const signal = calls[0]?.signal;
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(60_000);
    expect(signal?.aborted).toBe(true);
    expect(calls[0]?.expired).toBe(true);
    for (const call of calls) call.dispose();
  });

  it('arms nothing when its signal is first asked for after it was disposed', () => {
    const controller = new AbortController();
    const call = new WaitCall(ctx, spec(60_000, controller.signal));
    call.dispose();
    expect(call.signal).toBe(controller.signal);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('counts waitMs from the call, not from when its signal is first asked for', () => {
    const call = new WaitCall(ctx, spec(1_000));
    jest.advanceTimersByTime(600);
    const signal = call.signal;
    jest.advanceTimersByTime(399);
    expect(signal?.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(call.expired).toBe(true);
    const late = new WaitCall(ctx, spec(1_000));
    jest.advanceTimersByTime(1_000);
    // Asked for after waitMs ran out: aborted already, with no timer.
    expect(late.signal?.aborted).toBe(true);
    expect(late.expired).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
  });

  it("passes its caller's abort on, and is the caller's own signal without waitMs", () => {
    const controller = new AbortController();
    const bounded = new WaitCall(ctx, spec(1_000, controller.signal));
    const signal = bounded.signal;
    expect(new WaitCall(ctx, spec(undefined, controller.signal)).signal).toBe(controller.signal);
    controller.abort(new Error('gave up'));
    expect(signal?.reason).toEqual(new Error('gave up'));
    expect(bounded.expired).toBe(false);
    bounded.dispose();
  });

  it('gives back a grant that answered after waitMs, reporting a failure of that but not the loss of a hold nobody saw', async () => {
    const backgroundError = jest.fn();
    const watched = new EngineContext({ clientId: 'c', keyPrefix: 'p', watchdogTimeoutMs: 30_000, commandTimeoutMs: 1_000 }, queues, {
      ...reports,
      backgroundError,
    });
    for (const failure of [new LockLostError('n', 'expired'), new Error('refused')]) {
      let answer: (outcome: TryOutcome<string>) => void = () => undefined;
      const giveBack = jest.fn(() => Promise.reject(failure));
      const call = new WaitCall(watched, { ...spec(1_000), tryOnce: () => new Promise<TryOutcome<string>>((resolve) => (answer = resolve)), giveBack });
      const trying = call.tryOnce().then(
        () => 'granted',
        () => 'cut off',
      );
      // waitMs runs out; the call's rejection is deferred a turn (see WaitCall.race).
      await jest.advanceTimersByTimeAsync(1_001);
      await expect(trying).resolves.toBe('cut off');
      answer({ grant: 'g' });
      await jest.advanceTimersByTimeAsync(0);
      expect(giveBack).toHaveBeenCalledWith('g');
      call.dispose();
    }
    expect(backgroundError.mock.calls).toEqual([[new Error('refused')]]);
  });
});
