import { describe, expect, it } from '@jest/globals';
import { advance, flush, useWatchdogHarness } from './watchdog-harness.js';
import { FakeHold, PERIOD_MS } from './renewal-fakes.js';

/** A hold with a cap on renewal (`maxLeaseMs`), as core's Hold carries it. */
class CappedHold extends FakeHold {
  constructor(
    name: string,
    readonly maxLeaseAt: number,
  ) {
    super(name);
  }
}

describe('Watchdog', () => {
  const setup = useWatchdogHarness();

  describe('maxLeaseAt', () => {
    it('renews a capped hold until its cap, then loses it (maxLease) instead of renewing', async () => {
      const { backend, watchdog } = setup();
      const hold = new CappedHold('capped', performance.now() + 1.5 * PERIOD_MS);
      watchdog.add(hold);

      await advance(PERIOD_MS);
      expect(backend.calls).toHaveLength(1);
      backend.replyAll('renewed');
      await flush();
      expect(hold.loseCalls).toEqual([]);

      // The next renewal would come after the cap: the hold is lost, nothing is sent.
      await advance(PERIOD_MS);
      expect(hold.loseCalls.map((call) => call.reason)).toEqual(['maxLease']);
      expect(backend.calls).toHaveLength(1);
      await advance(3 * PERIOD_MS);
      expect(backend.calls).toHaveLength(1);
      expect(hold.loseCalls).toHaveLength(1);
    });

    it('never renews a hold whose cap has passed, even when its timer fires late', async () => {
      const { backend, watchdog } = setup();
      const hold = new CappedHold('late', performance.now() + 10);
      watchdog.add(hold);
      // One tick long after the cap (a stalled event loop): lost, not renewed.
      await advance(PERIOD_MS);
      expect(backend.calls).toHaveLength(0);
      expect(hold.loseCalls.map((call) => call.reason)).toEqual(['maxLease']);
    });
  });
});
