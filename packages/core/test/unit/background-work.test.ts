import { getEventListeners } from 'node:events';
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

  it('keeps 20 retries waiting at once on one abort listener (no leak warning), and retryNow() still ends every wait', async () => {
    const work = new BackgroundWork();
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      let failing = true;
      const done = Array.from({ length: 20 }, () =>
        work.retry(() => Promise.resolve(!failing), { until: monotonicNow() + 120_000, minDelayMs: 60_000, maxDelayMs: 60_000 }),
      );
      await new Promise((resolve) => setImmediate(resolve));
      // The one signal every wait between tries listens on (retryNow() aborts it).
      const nudge = (work as unknown as { nudge: AbortController }).nudge.signal;
      expect(getEventListeners(nudge, 'abort')).toHaveLength(1);
      failing = false;
      work.retryNow();
      await expect(Promise.all(done)).resolves.toEqual(Array.from({ length: 20 }, () => true));
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
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
