import { describe, expect, it } from '@jest/globals';
import { backoffDelayMs } from '../../src/engine/backoff.js';

describe('backoffDelayMs', () => {
  it('waits between half and all of a ceiling that doubles with each failure', () => {
    expect([1, 2, 3].map((failures) => backoffDelayMs(failures, 100, 10_000, 0))).toEqual([100, 200, 400]);
    expect([1, 2, 3].map((failures) => backoffDelayMs(failures, 100, 10_000, 0.999_999))).toEqual([200, 400, 800].map((ceiling) => expect.closeTo(ceiling, 3)));
  });

  it('never leaves [minMs, maxMs], whatever the failure count and random draw', () => {
    for (const [minMs, maxMs] of [
      [100, 1_000],
      [1, 1],
      [300, 400],
      [5, 2 ** 31 - 1],
    ] as const) {
      for (const failures of [1, 2, 5, 40, 2_000]) {
        for (const random of [0, 0.25, 0.5, 0.999_999]) {
          const delay = backoffDelayMs(failures, minMs, maxMs, random);
          expect(delay).toBeGreaterThanOrEqual(minMs);
          expect(delay).toBeLessThanOrEqual(maxMs);
        }
      }
    }
  });

  it('keeps jitter once the ceiling is capped', () => {
    expect(backoffDelayMs(10, 100, 1_000, 0)).toBe(500);
    expect(backoffDelayMs(10, 100, 1_000, 0.5)).toBe(750);
  });
});

describe('backoffDelayMs with a factor', () => {
  it('grows the ceiling by the factor', () => {
    expect([1, 2, 3].map((failures) => backoffDelayMs(failures, 10, 10_000, 0, 3))).toEqual([15, 45, 135]);
  });
});
