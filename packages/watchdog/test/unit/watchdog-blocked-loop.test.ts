import { describe, expect, it, jest } from '@jest/globals';
import { advance, flush, useWatchdogHarness } from './watchdog-harness.js';
import { FakeHold } from './renewal-fakes.js';

/**
 * A synchronous stall: from now on performance.now() reads `ms` later than the
 * fake clock, so the next timer fires at its time while the watchdog sees it
 * fire `ms` late, as after a blocked event loop.
 */
function stallFor(ms: number): void {
  const fakeNow = performance.now.bind(performance);
  jest.spyOn(performance, 'now').mockImplementation(() => fakeNow() + ms);
}

describe('Watchdog', () => {
  const setup = useWatchdogHarness();

  describe('a blocked event loop', () => {
    it('says in the loss that the event loop was blocked, and for how long, when the renewal ran past the deadline', async () => {
      const { backend, watchdog } = setup();
      backend.autoReply = (holds) => holds.map(() => 'renewed');
      const hold = new FakeHold('stalled', { leaseMs: 600 });
      watchdog.add(hold);
      await advance(100); // the renewal is due at 200 ms
      stallFor(1_500);
      await advance(100);
      expect(hold.loseCalls).toHaveLength(1);
      expect(hold.loseCalls[0]?.reason).toBe('unreachable');
      const detail = hold.loseCalls[0]?.detail ?? '';
      expect(detail).toMatch(/^the event loop was blocked for ~\d+ ms before the renewal ran$/);
      expect(Number(/~(\d+)/.exec(detail)?.[1])).toBeGreaterThanOrEqual(1_400);
      expect(backend.calls).toHaveLength(0); // nothing was sent past the deadline
    });

    it('says so when a renewal sent after the stall finds the key gone', async () => {
      const { backend, watchdog } = setup();
      const hold = new FakeHold('gone-late', { leaseMs: 3_000 });
      watchdog.add(hold);
      await advance(500); // due at 1 000 ms
      stallFor(600); // late, but before the deadline: the renewal goes out
      await advance(500);
      expect(backend.calls).toHaveLength(1);
      backend.calls[0]?.resolve(['gone']);
      await flush();
      expect(hold.loseCalls).toMatchObject([{ reason: 'expired', detail: expect.stringMatching(/event loop was blocked for ~\d+ ms/) }]);
    });
  });
});
