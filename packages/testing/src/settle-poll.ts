import { setTimeout as delay } from 'node:timers/promises';
import type { ServerGroup } from './server-group.js';

/** Pause between two polls of the nodes while waiting for a fleet to settle. */
const POLL_INTERVAL_MS = 50;

/**
 * Polls `observe` until it sees the fleet settled (anything but a string, which says what keeps it from
 * settling) and `problemWith` finds nothing missing in what it saw; returns that.
 * @throws Error (`<owner>: timed out after … waiting for <what>; last seen: <problem>`) when `timeoutMs` passes,
 * or once the group is stopped.
 */
export async function pollUntilSettled<Seen>(
  group: ServerGroup,
  what: string,
  timeoutMs: number,
  observe: () => Promise<Seen | string>,
  problemWith: (seen: Seen) => string | undefined,
): Promise<Seen> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    group.assertNotStopped('wait');
    const seen = await observe();
    const problem = typeof seen === 'string' ? seen : problemWith(seen);
    if (problem === undefined) return seen as Seen;
    if (performance.now() >= deadline) {
      throw new Error(`${group.owner}: timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${problem}`);
    }
    await delay(POLL_INTERVAL_MS);
  }
}
