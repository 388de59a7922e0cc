import { describe, expect, it, jest } from '@jest/globals';
import { advance, flush, useWatchdogHarness } from './watchdog-harness.js';
import { FakeHold, LEASE_MS, PERIOD_MS, makeHolds } from './renewal-fakes.js';

describe('Watchdog', () => {
  const setup = useWatchdogHarness();

  describe('add', () => {
    it('treats adding a tracked hold again as a no-op', async () => {
      const { backend, watchdog } = setup();
      const hold = new FakeHold('a');
      watchdog.add(hold);
      await advance(3_000);
      watchdog.add(hold); // must not push its renewal back

      await advance(PERIOD_MS - 3_000);
      expect(backend.calls.map((call) => call.holds)).toEqual([[hold]]);
    });

    it('ignores a hold that is no longer active', async () => {
      const { backend, watchdog } = setup();
      const hold = new FakeHold('a');
      hold.active = false;
      watchdog.add(hold);

      await advance(3 * LEASE_MS);
      expect(backend.calls).toEqual([]);
      expect(hold.loseCalls).toEqual([]);
      expect(jest.getTimerCount()).toBe(0);
    });

    it('drops a hold that went inactive without being removed, at its next renewal', async () => {
      const { backend, watchdog } = setup();
      const hold = new FakeHold('a');
      watchdog.add(hold);
      hold.active = false;

      await advance(3 * LEASE_MS);
      expect(backend.calls).toEqual([]);
      expect(hold.loseCalls).toEqual([]);
    });
  });

  describe('remove', () => {
    it('sends nothing for a hold removed before it was due', async () => {
      const { backend, watchdog } = setup();
      const [kept, removed] = makeHolds(2) as [FakeHold, FakeHold];
      watchdog.add(kept);
      watchdog.add(removed);
      await advance(PERIOD_MS - 1);
      watchdog.remove(removed);

      await advance(1);
      expect(backend.calls.map((call) => call.holds)).toEqual([[kept]]);
      await advance(3 * LEASE_MS);
      expect(removed.loseCalls).toEqual([]);
    });

    it('neither extends nor loses a hold removed while its call was out', async () => {
      const { backend, watchdog } = setup();
      const [renewed, gone] = makeHolds(2) as [FakeHold, FakeHold];
      watchdog.add(renewed);
      watchdog.add(gone);
      await advance(PERIOD_MS);
      watchdog.remove(renewed);
      watchdog.remove(gone);

      const call = backend.calls[0];
      call?.resolve(call.holds.map((hold) => (hold === renewed ? 'renewed' : 'gone')));
      await flush();
      expect(renewed.extendCalls).toEqual([]);
      expect(gone.loseCalls).toEqual([]);
      await advance(3 * LEASE_MS);
      expect(backend.calls).toHaveLength(1);
      expect(renewed.loseCalls).toEqual([]);
    });

    it('ignores a reply sent before a remove, even once the hold was added again', async () => {
      const { backend, watchdog } = setup();
      const hold = new FakeHold('a');
      watchdog.add(hold);
      await advance(PERIOD_MS);
      watchdog.remove(hold);
      watchdog.add(hold);

      backend.calls[0]?.resolve(['gone']);
      await flush();
      expect(hold.loseCalls).toEqual([]);
      await advance(PERIOD_MS);
      expect(backend.calls).toHaveLength(2);
    });

    it('neither retries nor loses a hold removed while waiting to retry', async () => {
      const { backend, reporter, watchdog } = setup();
      const hold = new FakeHold('a');
      watchdog.add(hold);
      await advance(PERIOD_MS);
      backend.calls[0]?.reject(new Error('ECONNREFUSED'));
      await flush();
      expect(reporter.errors).toHaveLength(1);
      watchdog.remove(hold);

      await advance(3 * LEASE_MS);
      expect(backend.calls).toHaveLength(1);
      expect(hold.loseCalls).toEqual([]);
    });

    it('sends nothing for a hold removed by a loss handler that ran earlier in the same tick', async () => {
      const { backend, watchdog } = setup();
      const released = new FakeHold('released-by-handler');
      const lost = new FakeHold('lost');
      // What a lockLost listener might do: release another lock, which removes its hold.
      lost.lose = function (reason, cause) {
        FakeHold.prototype.lose.call(this, reason, cause);
        watchdog.remove(released);
      };
      watchdog.add(released);
      watchdog.add(lost);
      await advance(PERIOD_MS - 1);
      lost.deadline = performance.now(); // stands in for a timer that fired late

      await advance(1);
      expect(lost.loseCalls.map((call) => call.reason)).toEqual(['unreachable']);
      expect(backend.calls).toEqual([]);
    });

    it('tolerates removing a hold it does not track', () => {
      const { watchdog } = setup();
      expect(() => watchdog.remove(new FakeHold('never-added'))).not.toThrow();
    });
  });

  describe('close', () => {
    it('resolves only once the renew calls in flight have settled', async () => {
      const { backend, watchdog } = setup();
      for (const hold of makeHolds(150)) watchdog.add(hold);
      await advance(PERIOD_MS);
      const [first, second] = backend.calls;

      let closed = false;
      const closing = watchdog.close().then(() => {
        closed = true;
      });
      await flush();
      expect(closed).toBe(false);
      first?.resolve(first.holds.map(() => 'renewed'));
      await flush();
      expect(closed).toBe(false);
      second?.reject(new Error('ECONNRESET'));
      await closing;
      expect(closed).toBe(true);
    });

    it('applies no reply that comes after it and reports nothing', async () => {
      const { backend, reporter, watchdog } = setup();
      const [renewed, failed] = makeHolds(2, 'x', {}) as [FakeHold, FakeHold];
      watchdog.add(renewed);
      await advance(1_000);
      watchdog.add(failed);
      await advance(PERIOD_MS);
      expect(backend.calls).toHaveLength(2);

      const closing = watchdog.close();
      backend.calls[0]?.resolve(['renewed']);
      backend.calls[1]?.reject(new Error('ECONNRESET'));
      await expect(closing).resolves.toBeUndefined();
      expect(renewed.extendCalls).toEqual([]);
      expect(reporter.errors).toEqual([]);
      expect(reporter.renewedCounts).toEqual([]);
    });

    it('stops the timer and forgets every hold', async () => {
      const { backend, watchdog } = setup();
      const holds = makeHolds(3, 'x', { leaseMs: 3_000 });
      for (const hold of holds) watchdog.add(hold);
      expect(jest.getTimerCount()).toBe(1);

      await watchdog.close();
      expect(jest.getTimerCount()).toBe(0);
      await advance(3 * LEASE_MS);
      expect(backend.calls).toEqual([]);
      for (const hold of holds) expect(hold.loseCalls).toEqual([]);
    });

    it('ignores holds added after it', async () => {
      const { backend, watchdog } = setup();
      await watchdog.close();
      watchdog.add(new FakeHold('late'));

      await advance(3 * LEASE_MS);
      expect(backend.calls).toEqual([]);
      expect(jest.getTimerCount()).toBe(0);
    });

    it('returns the same promise when called again', async () => {
      const { watchdog } = setup();
      const first = watchdog.close();
      expect(watchdog.close()).toBe(first);
      await first;
    });
  });
});
