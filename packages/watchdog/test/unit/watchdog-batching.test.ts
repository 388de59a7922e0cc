import { describe, expect, it } from '@jest/globals';
import type { RenewOutcome } from '@org/rlock-core/internal';
import { advance, flush, useWatchdogHarness } from './watchdog-harness.js';
import { FakeHold, PERIOD_MS, makeHolds } from './renewal-fakes.js';

describe('Watchdog', () => {
  const setup = useWatchdogHarness();

  describe('batching', () => {
    it('sends 250 holds due in one tick as 3 parallel calls with maxBatch 100', async () => {
      const { backend, watchdog } = setup({}, 100);
      const holds = makeHolds(250);
      for (const hold of holds) watchdog.add(hold);

      await advance(PERIOD_MS);
      // All three are out before any is answered: the batches go in parallel.
      expect(backend.pending().map((call) => call.holds.length)).toEqual([100, 100, 50]);
      expect(new Set(backend.calls.flatMap((call) => call.holds))).toEqual(new Set(holds));
      expect(new Set(backend.calls.map((call) => call.calledAt)).size).toBe(1);
    });

    it('renews 10,000 holds on one server with 100 calls per tick', async () => {
      const { backend, watchdog } = setup();
      backend.autoReply = (holds) => holds.map(() => 'renewed');
      for (const hold of makeHolds(10_000)) watchdog.add(hold);

      await advance(PERIOD_MS);
      expect(backend.calls).toHaveLength(100);
      await advance(PERIOD_MS);
      expect(backend.calls).toHaveLength(200);
      expect(backend.calls.every((call) => call.holds.length === 100)).toBe(true);
    });

    it('puts only holds with the same batch key in one call', async () => {
      const { backend, watchdog } = setup({}, 25);
      for (const hold of makeHolds(30, 'a', { shard: 'slot-1' })) watchdog.add(hold);
      for (const hold of makeHolds(20, 'b', { shard: 'slot-2' })) watchdog.add(hold);

      await advance(PERIOD_MS);
      const shapes = backend.calls.map((call) => [call.holds[0]?.shard, call.holds.length]);
      expect(shapes).toEqual([
        ['slot-1', 25],
        ['slot-1', 5],
        ['slot-2', 20],
      ]);
      for (const call of backend.calls) {
        expect(new Set(call.holds.map((hold) => hold.shard)).size).toBe(1);
      }
    });

    it('reports the number renewed after each batch that renewed any', async () => {
      const { backend, reporter, watchdog } = setup({}, 100);
      for (const hold of makeHolds(250)) watchdog.add(hold);
      await advance(PERIOD_MS);

      const [first, second, third] = backend.calls;
      second?.resolve(second.holds.map((_, i): RenewOutcome => (i % 2 === 0 ? 'renewed' : 'gone')));
      await flush();
      third?.resolve(third.holds.map((): RenewOutcome => 'taken'));
      await flush();
      first?.resolve(first.holds.map((): RenewOutcome => 'renewed'));
      await flush();
      expect(reporter.renewedCounts).toEqual([50, 100]);
    });

    it('keeps a batch together across renewals', async () => {
      const { backend, watchdog } = setup();
      backend.autoReply = (holds) => holds.map(() => 'renewed');
      for (const hold of makeHolds(40)) watchdog.add(hold);
      await advance(30); // within the coalescing window of the first
      watchdog.add(new FakeHold('late'));

      await advance(5 * PERIOD_MS);
      expect(backend.calls.map((call) => call.holds.length)).toEqual([41, 41, 41, 41, 41]);
    });
  });
});
