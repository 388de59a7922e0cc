import { describe, expect, it, jest } from '@jest/globals';
import type { RenewableHold, RenewOutcome } from '@org/rlock-core/internal';
import { advance, flush, useWatchdogHarness } from './watchdog-harness.js';
import { FakeHold, PERIOD_MS, driftMs, makeHolds } from './renewal-fakes.js';

/** Every renew call rejects with a new error, recorded in `errors`. */
function failEveryCall(backend: { autoReply: ((holds: readonly FakeHold[]) => RenewOutcome[] | Error) | undefined }) {
  const errors: Error[] = [];
  backend.autoReply = () => {
    const error = new Error(`connection refused #${errors.length + 1}`);
    errors.push(error);
    return error;
  };
  return errors;
}

describe('Watchdog', () => {
  const setup = useWatchdogHarness();

  describe('failures', () => {
    it('reports a failed call and retries its holds until a renewal succeeds', async () => {
      jest.spyOn(Math, 'random').mockReturnValue(0); // shortest wait: minRetryDelayMs
      const { backend, reporter, watchdog } = setup({ minRetryDelayMs: 100, maxRetryDelayMs: 1_000 });
      const hold = new FakeHold('a');
      watchdog.add(hold);

      await advance(PERIOD_MS);
      const failure = new Error('ETIMEDOUT');
      backend.calls[0]?.reject(failure);
      await flush();
      expect(reporter.errors).toEqual([failure]);
      expect(hold.loseCalls).toEqual([]);

      await advance(99);
      expect(backend.calls).toHaveLength(1);
      await advance(1);
      expect(backend.calls).toHaveLength(2);
      const retrySentAt = backend.calls[1]?.calledAt as number;
      backend.replyAll('renewed');
      await flush();
      expect(hold.extendCalls).toEqual([retrySentAt]);
      expect(hold.loseCalls).toEqual([]);

      // Back to the normal period, counted from the successful retry.
      await advance(PERIOD_MS - 1);
      expect(backend.calls).toHaveLength(2);
      await advance(1);
      expect(backend.calls).toHaveLength(3);
    });

    it('backs off with growing, jittered waits between minRetryDelayMs and maxRetryDelayMs', async () => {
      const random = jest.spyOn(Math, 'random').mockReturnValue(0.5); // waits are 3/4 of the ceiling
      const { backend, watchdog } = setup({ minRetryDelayMs: 100, maxRetryDelayMs: 1_000 });
      failEveryCall(backend);
      watchdog.add(new FakeHold('a'));

      await advance(PERIOD_MS + 5_000);
      const gaps = backend.calls.slice(1, 7).map((call, i) => call.calledAt - (backend.calls[i]?.calledAt as number));
      // ceilings 200, 400, 800, then capped at 1,000
      expect(gaps).toEqual([150, 300, 600, 750, 750, 750]);
      expect(random).toHaveBeenCalled();
    });

    it('retries the holds of a failed call together, in one call', async () => {
      const { backend, watchdog } = setup();
      const holds = makeHolds(30);
      for (const hold of holds) watchdog.add(hold);

      await advance(PERIOD_MS);
      backend.calls[0]?.reject(new Error('ECONNRESET'));
      await flush();
      await advance(1_000); // the longest wait by default
      expect(backend.calls).toHaveLength(2);
      expect(new Set(backend.calls[1]?.holds)).toEqual(new Set(holds));
    });

    it('loses a hold as unreachable exactly once, at its deadline, when every retry fails', async () => {
      const { backend, reporter, watchdog } = setup({ minRetryDelayMs: 50, maxRetryDelayMs: 200 });
      const errors = failEveryCall(backend);
      const start = performance.now();
      const hold = new FakeHold('a', { leaseMs: 3_000 });
      const deadline = hold.deadline;
      watchdog.add(hold);

      await advance(deadline - start - 1);
      expect(hold.loseCalls).toEqual([]);
      expect(backend.calls.length).toBeGreaterThan(3);
      await advance(1);
      expect(hold.loseCalls).toEqual([{ reason: 'unreachable', cause: errors.at(-1), at: deadline }]);
      expect(reporter.errors).toEqual(errors);

      const callsAtLoss = backend.calls.length;
      await advance(10_000);
      expect(hold.loseCalls).toHaveLength(1);
      expect(backend.calls).toHaveLength(callsAtLoss);
      expect(deadline).toBe(start + 3_000 - driftMs(3_000));
    });

    it('loses a hold at its deadline while its renew call hangs, and ignores the late reply', async () => {
      const { backend, watchdog } = setup();
      const start = performance.now();
      const hold = new FakeHold('a', { leaseMs: 3_000 });
      const deadline = hold.deadline;
      watchdog.add(hold);

      await advance(1_000); // the renewal goes out and never returns
      expect(backend.pending()).toHaveLength(1);
      await advance(deadline - start - 1_000 - 1);
      expect(hold.loseCalls).toEqual([]);
      await advance(1);
      expect(hold.loseCalls).toHaveLength(1);
      expect(hold.loseCalls[0]).toMatchObject({ reason: 'unreachable', at: deadline });
      expect(hold.loseCalls[0]?.cause).toMatchObject({
        name: 'RedisUnavailableError',
        code: 'ERR_RLOCK_REDIS_UNAVAILABLE',
        message: expect.stringContaining('no reply'),
      });

      backend.replyAll('renewed');
      await flush();
      await advance(10_000);
      expect(hold.extendCalls).toEqual([]);
      expect(hold.loseCalls).toHaveLength(1);
      expect(backend.calls).toHaveLength(1);
    });

    it('treats renew throwing synchronously as a failed call', async () => {
      const { backend, reporter, watchdog } = setup();
      const failure = new Error('not connected');
      const renew = jest.spyOn(backend, 'renew').mockImplementationOnce(() => {
        throw failure;
      });
      const hold = new FakeHold('a');
      watchdog.add(hold);

      await advance(PERIOD_MS);
      expect(reporter.errors).toEqual([failure]);
      await advance(1_000);
      expect(renew).toHaveBeenCalledTimes(2);
      backend.replyAll('renewed');
      await flush();
      expect(hold.extendCalls).toHaveLength(1);
    });

    it('treats a reply with the wrong number of outcomes as a failed call', async () => {
      const { backend, reporter, watchdog } = setup();
      const [a, b] = makeHolds(2) as [FakeHold, FakeHold];
      watchdog.add(a);
      watchdog.add(b);

      await advance(PERIOD_MS);
      backend.calls[0]?.resolve(['renewed']);
      await flush();
      expect(a.extendCalls).toEqual([]);
      expect(reporter.errors).toHaveLength(1);
      expect(reporter.errors[0]).toBeInstanceOf(TypeError);
      await advance(1_000);
      expect(backend.calls).toHaveLength(2);
    });

    it('retries a hold whose batch key cannot be computed, and loses it at its deadline if that persists', async () => {
      const { backend, reporter, watchdog } = setup();
      const failure = new Error('no slot');
      jest.spyOn(backend, 'batchKey').mockImplementation(() => {
        throw failure;
      });
      const hold = new FakeHold('a', { leaseMs: 3_000 });
      watchdog.add(hold);

      await advance(3_000);
      expect(backend.calls).toEqual([]);
      expect(reporter.errors.length).toBeGreaterThan(0);
      expect(reporter.errors.every((error) => error === failure)).toBe(true);
      expect(hold.loseCalls).toEqual([{ reason: 'unreachable', cause: failure, at: hold.loseCalls[0]?.at }]);
    });

    it('survives a backend, holds and reporter that all throw, with no unhandled rejection', async () => {
      // Jest fails the running test on an unhandled rejection, so passing proves none occurred.
      const { backend, reporter, watchdog } = setup({ minRetryDelayMs: 10, maxRetryDelayMs: 50 });
      jest.spyOn(reporter, 'error').mockImplementation(() => {
        throw new Error('reporter broken');
      });
      jest.spyOn(reporter, 'renewed').mockImplementation(() => {
        throw new Error('reporter broken');
      });
      let calls = 0;
      jest.spyOn(backend, 'renew').mockImplementation((holds: readonly RenewableHold[]) => {
        calls++;
        if (calls % 3 === 0) throw new Error('sync failure');
        if (calls % 3 === 1) return Promise.reject(new Error('async failure'));
        return Promise.resolve(holds.map((hold): RenewOutcome => (hold.name === 'lose-throws' ? 'gone' : 'renewed')));
      });
      const extendThrows = new FakeHold('extend-throws', { leaseMs: 3_000 });
      extendThrows.extend = () => {
        throw new Error('extend broken');
      };
      const loseThrows = new FakeHold('lose-throws', { leaseMs: 3_000 });
      const loseAttempts: string[] = [];
      loseThrows.lose = (reason) => {
        loseAttempts.push(reason);
        throw new Error('lose broken');
      };
      const deadlineThrows = new FakeHold('deadline-throws', { leaseMs: 3_000 });
      Object.defineProperty(deadlineThrows, 'deadline', {
        get: () => {
          throw new Error('deadline broken');
        },
      });
      const healthy = new FakeHold('healthy', { leaseMs: 3_000 });
      for (const hold of [extendThrows, loseThrows, healthy]) watchdog.add(hold);
      expect(() => watchdog.add(deadlineThrows)).toThrow('deadline broken');

      await advance(20_000);
      // The scheduler kept going: the healthy hold is still renewed, though every
      // third call throws, every third rejects, and reporting always throws.
      const callsBefore = calls;
      await advance(2_000);
      expect(calls).toBeGreaterThan(callsBefore);
      expect(healthy.loseCalls).toEqual([]);
      expect(healthy.extendCalls.length).toBeGreaterThan(5);
      // A hold whose extend throws is never extended, so it is lost at its deadline.
      expect(extendThrows.loseCalls.map((call) => call.reason)).toEqual(['unreachable']);
      // A hold found gone is dropped even though its lose() threw.
      expect(loseAttempts).toEqual(['expired']);
      const renewCallsOf = (name: string): number =>
        (backend.renew as jest.Mock<typeof backend.renew>).mock.calls.filter(([holds]) => holds.some((hold) => hold.name === name)).length;
      const loseThrowsCalls = renewCallsOf('lose-throws');
      await advance(5_000);
      expect(renewCallsOf('lose-throws')).toBe(loseThrowsCalls);
    });

    it('loses, as unreachable, a hold whose fields start throwing, and reports the error', async () => {
      const { backend, reporter, watchdog } = setup();
      const hold = new FakeHold('a');
      watchdog.add(hold);
      const broken = new Error('deadline broken');
      Object.defineProperty(hold, 'deadline', {
        get: () => {
          throw broken;
        },
      });

      await advance(PERIOD_MS);
      expect(backend.calls).toEqual([]);
      expect(reporter.errors).toEqual([broken]);
      expect(hold.loseCalls).toMatchObject([{ reason: 'unreachable', cause: broken }]);
    });

    it('keeps renewing a hold whose extend throws until its deadline, then loses it', async () => {
      const { backend, reporter, watchdog } = setup();
      backend.autoReply = (holds) => holds.map(() => 'renewed');
      const hold = new FakeHold('a', { leaseMs: 3_000 });
      hold.extend = () => {
        throw new Error('extend broken');
      };
      watchdog.add(hold);

      await advance(2_500);
      expect(backend.calls).toHaveLength(2);
      expect(reporter.errors.map((error) => error.message)).toEqual(['extend broken', 'extend broken']);
      await advance(500);
      expect(hold.loseCalls.map((call) => call.reason)).toEqual(['unreachable']);
    });
  });
});
