import { describe, expect, it } from '@jest/globals';
import { BackgroundWork } from '../../src/engine/background-work.js';
import { monotonicNow } from '../../src/connection/time.js';

describe('BackgroundWork', () => {
  it('retryNow() ends the wait between tries, so a retry goes out as soon as the connection is back', async () => {
    const work = new BackgroundWork();
    let tries = 0;
    let secondTry: () => void = () => undefined;
    const triedAgain = new Promise<void>((resolve) => (secondTry = resolve));
    const done = work.retry(
      () => {
        tries++;
        if (tries === 2) secondTry();
        return Promise.resolve(tries >= 2);
      },
      // A minute between tries: only retryNow() can bring the second one within the test's time.
      { until: monotonicNow() + 120_000, minDelayMs: 60_000, maxDelayMs: 60_000 },
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(tries).toBe(1);
    work.retryNow();
    await triedAgain;
    await expect(done).resolves.toBe(true);
  });

  it('stop() ends the wait too, and no try follows', async () => {
    const work = new BackgroundWork();
    let tries = 0;
    const done = work.retry(
      () => {
        tries++;
        return Promise.resolve(false);
      },
      { until: monotonicNow() + 120_000, minDelayMs: 60_000, maxDelayMs: 60_000 },
    );
    await new Promise((resolve) => setImmediate(resolve));
    work.stop();
    await expect(done).resolves.toBe(false);
    expect(tries).toBe(1);
    await work.settled();
  });
});
