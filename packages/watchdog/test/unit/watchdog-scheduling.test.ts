import { describe, expect, it, jest } from '@jest/globals';
import { advance, flush, useWatchdogHarness } from './watchdog-harness.js';
import { FakeHold, LEASE_MS, PERIOD_MS, driftMs, makeHolds } from './renewal-fakes.js';

describe('Watchdog', () => {
  const setup = useWatchdogHarness();

  describe('scheduling', () => {
    it('sends the first renewal leaseMs / 3 after add, not before', async () => {
      const { backend, watchdog } = setup();
      const hold = new FakeHold('a');
      watchdog.add(hold);

      await advance(PERIOD_MS - 1);
      expect(backend.calls).toHaveLength(0);
      await advance(1);
      expect(backend.calls).toHaveLength(1);
      expect(backend.calls[0]?.holds).toEqual([hold]);
    });

    it('renews every leaseMs / 3 counted from when each renewal was sent, not from its reply', async () => {
      const { backend, watchdog } = setup();
      watchdog.add(new FakeHold('a'));
      const start = performance.now();

      await advance(PERIOD_MS);
      await advance(700); // the reply takes 700 ms
      backend.replyAll();
      await flush();
      await advance(PERIOD_MS - 700 - 1);
      expect(backend.calls).toHaveLength(1);
      await advance(1);
      expect(backend.calls.map((call) => call.calledAt - start)).toEqual([PERIOD_MS, 2 * PERIOD_MS]);
    });

    it('derives each hold’s period from its own lease', async () => {
      const { backend, watchdog } = setup();
      backend.autoReply = (holds) => holds.map(() => 'renewed');
      const start = performance.now();
      watchdog.add(new FakeHold('short', { leaseMs: 3_000 }));
      watchdog.add(new FakeHold('long', { leaseMs: 30_000 }));

      await advance(10_000);
      const times = (name: string): number[] => backend.calls.filter((call) => call.holds.some((hold) => hold.name === name)).map((c) => c.calledAt - start);
      expect(times('short')).toEqual([1_000, 2_000, 3_000, 4_000, 5_000, 6_000, 7_000, 8_000, 9_000, 10_000]);
      expect(times('long')).toEqual([10_000]);
    });

    it('extends with the monotonic time taken before renew was called', async () => {
      const { backend, watchdog } = setup();
      const hold = new FakeHold('a');
      watchdog.add(hold);

      await advance(PERIOD_MS);
      const sentAt = backend.calls[0]?.calledAt as number;
      await advance(1_234);
      backend.replyAll();
      await flush();
      expect(hold.extendCalls).toEqual([sentAt]);
      expect(hold.extendCalls[0]).toBeLessThan(performance.now());
      expect(hold.deadline).toBe(sentAt + LEASE_MS - driftMs(LEASE_MS));
    });

    it('sends holds added within the coalescing window in one call', async () => {
      const { backend, watchdog } = setup({ coalesceWindowMs: 100 });
      const [a, b] = makeHolds(2);
      watchdog.add(a as FakeHold);
      await advance(60);
      watchdog.add(b as FakeHold);

      await advance(PERIOD_MS - 60);
      expect(backend.calls).toHaveLength(1);
      expect(backend.calls[0]?.holds).toEqual([a, b]);
    });

    it('sends each hold at its own due time when coalescing is off', async () => {
      const { backend, watchdog } = setup({ coalesceWindowMs: 0 });
      watchdog.add(new FakeHold('a'));
      await advance(60);
      watchdog.add(new FakeHold('b'));

      await advance(PERIOD_MS - 60);
      expect(backend.calls.map((call) => call.holds.map((hold) => hold.name))).toEqual([['a']]);
      await advance(60);
      expect(backend.calls.map((call) => call.holds.map((hold) => hold.name))).toEqual([['a'], ['b']]);
    });

    it('renews a hold at most a tenth of its period early to share a tick', async () => {
      const { backend, watchdog } = setup({ coalesceWindowMs: 1_000 });
      backend.autoReply = (holds) => holds.map(() => 'renewed');
      watchdog.add(new FakeHold('a', { leaseMs: 3_000 })); // period 1,000 ms: at most 100 ms early
      await advance(50);
      watchdog.add(new FakeHold('b', { leaseMs: 3_000 }));
      await advance(100);
      watchdog.add(new FakeHold('c', { leaseMs: 3_000 }));

      await advance(1_000 - 150);
      expect(backend.calls.map((call) => call.holds.map((hold) => hold.name))).toEqual([['a', 'b']]);
      await advance(150);
      expect(backend.calls.map((call) => call.holds.map((hold) => hold.name))).toEqual([['a', 'b'], ['c']]);
    });

    it('keeps holds added far apart in separate ticks', async () => {
      const { backend, watchdog } = setup();
      const start = performance.now();
      watchdog.add(new FakeHold('a'));
      await advance(5_000);
      watchdog.add(new FakeHold('b'));

      await advance(PERIOD_MS);
      expect(backend.calls.map((call) => [call.calledAt - start, call.holds.map((hold) => hold.name)])).toEqual([
        [PERIOD_MS, ['a']],
        [PERIOD_MS + 5_000, ['b']],
      ]);
    });

    it('runs on a single unref’d timer however many holds it tracks', async () => {
      const setTimeoutSpy = jest.spyOn(globalThis, 'setTimeout');
      const { backend, watchdog } = setup();
      backend.autoReply = (holds) => holds.map(() => 'renewed');
      for (const hold of makeHolds(1_000)) {
        watchdog.add(hold);
        await advance(7); // spread over more than one coalescing window
      }
      expect(jest.getTimerCount()).toBe(1);
      await advance(2 * PERIOD_MS);
      expect(backend.calls.length).toBeGreaterThan(1);
      expect(jest.getTimerCount()).toBe(1);
      expect(setTimeoutSpy).toHaveBeenCalled();
      for (const result of setTimeoutSpy.mock.results) {
        expect((result.value as NodeJS.Timeout).hasRef()).toBe(false);
      }
    });

    it('touches only the holds that are due in a tick', async () => {
      const { backend, watchdog } = setup();
      const batchKey = jest.spyOn(backend, 'batchKey');
      watchdog.add(new FakeHold('early'));
      await advance(1_000);
      for (const hold of makeHolds(1_000, 'later')) watchdog.add(hold);

      await advance(PERIOD_MS - 1_000);
      expect(backend.calls).toHaveLength(1);
      expect(batchKey).toHaveBeenCalledTimes(1);
    });

    it('renews a hold added with less than two periods of lease left a period before its deadline', async () => {
      const { backend, watchdog } = setup();
      const start = performance.now();
      watchdog.add(new FakeHold('a', { deadline: start + 15_000 }));

      await advance(5_000 - 1);
      expect(backend.calls).toHaveLength(0);
      await advance(1);
      expect(backend.calls.map((call) => call.calledAt - start)).toEqual([5_000]);
    });

    it('renews at once a hold added with less than a period of lease left', async () => {
      const { backend, watchdog } = setup();
      const start = performance.now();
      watchdog.add(new FakeHold('a', { deadline: start + 2_000 }));

      await flush();
      expect(backend.calls.map((call) => call.calledAt - start)).toEqual([0]);
    });

    it('disarms its timer when no hold is left', async () => {
      const { watchdog } = setup();
      const hold = new FakeHold('a');
      watchdog.add(hold);
      expect(jest.getTimerCount()).toBe(1);
      watchdog.remove(hold);
      expect(jest.getTimerCount()).toBe(0);
    });
  });
});
