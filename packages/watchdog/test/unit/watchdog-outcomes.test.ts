import { describe, expect, it } from '@jest/globals';
import type { RenewOutcome } from '@org/rlock-core/internal';
import { advance, flush, useWatchdogHarness } from './watchdog-harness.js';
import { FakeHold, LEASE_MS, PERIOD_MS, driftMs } from './renewal-fakes.js';

describe('Watchdog', () => {
  const setup = useWatchdogHarness();

  describe('outcomes', () => {
    it('extends a renewed hold and renews it again a period later', async () => {
      const { backend, watchdog } = setup();
      const hold = new FakeHold('a');
      watchdog.add(hold);

      await advance(PERIOD_MS);
      const sentAt = backend.calls[0]?.calledAt as number;
      backend.replyAll('renewed');
      await flush();
      expect(hold.extendCalls).toEqual([sentAt]);
      expect(hold.deadline).toBe(sentAt + LEASE_MS - driftMs(LEASE_MS));
      expect(hold.loseCalls).toEqual([]);
      await advance(PERIOD_MS);
      expect(backend.calls).toHaveLength(2);
    });

    it('loses a hold found gone as expired and stops renewing it', async () => {
      const { backend, watchdog } = setup();
      const hold = new FakeHold('a');
      watchdog.add(hold);

      await advance(PERIOD_MS);
      backend.replyAll('gone');
      await flush();
      expect(hold.loseCalls.map((call) => call.reason)).toEqual(['expired']);
      expect(hold.extendCalls).toEqual([]);
      await advance(3 * LEASE_MS);
      expect(backend.calls).toHaveLength(1);
      expect(hold.loseCalls).toHaveLength(1);
    });

    it('loses a hold found with another owner or token as taken', async () => {
      const { backend, watchdog } = setup();
      const hold = new FakeHold('a');
      watchdog.add(hold);

      await advance(PERIOD_MS);
      backend.replyAll('taken');
      await flush();
      expect(hold.loseCalls.map((call) => call.reason)).toEqual(['taken']);
      await advance(3 * LEASE_MS);
      expect(backend.calls).toHaveLength(1);
    });

    it('applies each outcome of a batch to its own hold', async () => {
      const { backend, watchdog } = setup();
      const [renewed, gone, taken] = [new FakeHold('r'), new FakeHold('g'), new FakeHold('t')];
      for (const hold of [renewed, gone, taken]) watchdog.add(hold);

      await advance(PERIOD_MS);
      const outcomes: Record<string, RenewOutcome> = { r: 'renewed', g: 'gone', t: 'taken' };
      const call = backend.calls[0];
      call?.resolve(call.holds.map((hold) => outcomes[hold.name] as RenewOutcome));
      await flush();
      expect(renewed.extendCalls).toHaveLength(1);
      expect(renewed.loseCalls).toEqual([]);
      expect(gone.loseCalls.map((c) => c.reason)).toEqual(['expired']);
      expect(taken.loseCalls.map((c) => c.reason)).toEqual(['taken']);
      await advance(PERIOD_MS);
      expect(backend.calls[1]?.holds).toEqual([renewed]);
    });

    it('neither extends nor loses a hold that became inactive while its call was out', async () => {
      const { backend, watchdog } = setup();
      const [released, lost] = [new FakeHold('released'), new FakeHold('lost')];
      watchdog.add(released);
      watchdog.add(lost);

      await advance(PERIOD_MS);
      released.active = false; // released by core without remove (remove is tested apart)
      lost.active = false;
      const call = backend.calls[0];
      call?.resolve(call.holds.map((hold): RenewOutcome => (hold === released ? 'renewed' : 'gone')));
      await flush();
      expect(released.extendCalls).toEqual([]);
      expect(lost.loseCalls).toEqual([]);
      await advance(3 * LEASE_MS);
      expect(backend.calls).toHaveLength(1);
    });

    it('loses a hold as unreachable when its renewed reply comes after its deadline', async () => {
      const { backend, watchdog } = setup();
      const hold = new FakeHold('a', { leaseMs: 3_000 });
      watchdog.add(hold);
      await advance(1_000);
      const call = backend.calls[0];

      // A reply processed after the deadline, before the deadline's timer had its
      // turn (both wait in the event loop): moving the deadline into the past
      // stands in for that ordering, which fake timers cannot produce.
      await advance(500);
      hold.deadline = performance.now() - 1;
      call?.resolve(['renewed']);
      await flush();
      expect(hold.extendCalls).toEqual([]);
      expect(hold.loseCalls).toHaveLength(1);
      expect(hold.loseCalls[0]?.reason).toBe('unreachable');
      expect(hold.loseCalls[0]?.cause).toMatchObject({
        name: 'RedisUnavailableError',
        message: expect.stringContaining('came after its deadline'),
      });
    });
  });
});
