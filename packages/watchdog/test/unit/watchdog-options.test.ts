import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '@org/rlock-core';
import { WATCHDOG_DEFAULTS, Watchdog, createWatchdog, type WatchdogOptions } from '@org/rlock-watchdog';
import { resolveWatchdogOptions } from '../../src/watchdog-options.js';
import { FakeBackend, FakeHold, FakeReporter } from './renewal-fakes.js';

describe('Watchdog', () => {
  describe('options', () => {
    it('has documented defaults in one frozen object', () => {
      expect(WATCHDOG_DEFAULTS).toEqual({ minRetryDelayMs: 100, maxRetryDelayMs: 1_000, coalesceWindowMs: 100 });
      expect(Object.isFrozen(WATCHDOG_DEFAULTS)).toBe(true);
    });

    it('accepts valid options and explicit undefined fields', () => {
      expect(() => createWatchdog({ minRetryDelayMs: 1, maxRetryDelayMs: 1, coalesceWindowMs: 0 })).not.toThrow();
      expect(() => createWatchdog({ minRetryDelayMs: undefined })).not.toThrow();
      expect(() => createWatchdog()).not.toThrow();
    });

    it.each<[string, unknown]>([
      ['a non-object', 5],
      ['null', null],
      ['a fractional minRetryDelayMs', { minRetryDelayMs: 1.5 }],
      ['a zero minRetryDelayMs', { minRetryDelayMs: 0 }],
      ['a string maxRetryDelayMs', { maxRetryDelayMs: '1000' }],
      ['an infinite maxRetryDelayMs', { maxRetryDelayMs: Number.POSITIVE_INFINITY }],
      ['a maxRetryDelayMs above 2^31 − 1', { maxRetryDelayMs: 2 ** 31 }],
      ['a negative coalesceWindowMs', { coalesceWindowMs: -1 }],
      ['a NaN coalesceWindowMs', { coalesceWindowMs: Number.NaN }],
      ['minRetryDelayMs above maxRetryDelayMs', { minRetryDelayMs: 2_000, maxRetryDelayMs: 1_000 }],
      ['an unknown option (a typo)', { retryDelayMS: 100 }],
    ])('rejects %s with InvalidArgumentError, from createWatchdog and the constructor', (_, options) => {
      expect(() => createWatchdog(options as WatchdogOptions)).toThrow(InvalidArgumentError);
      expect(() => new Watchdog(new FakeBackend(), new FakeReporter(), options as WatchdogOptions)).toThrow(InvalidArgumentError);
    });

    it('names the offending option in the message', () => {
      expect(() => createWatchdog({ maxRetryDelayMs: -5 })).toThrow(/maxRetryDelayMs .* got -5/);
    });

    it('does not honour an option inherited through the prototype', () => {
      expect(resolveWatchdogOptions({ __proto__: { coalesceWindowMs: 77 } } as never).coalesceWindowMs).not.toBe(77);
    });

    it.each([0, -1, 1.5, Number.NaN, '100'])('rejects a backend whose maxBatch is %p', (maxBatch) => {
      const backend = new FakeBackend();
      (backend as { maxBatch: unknown }).maxBatch = maxBatch;
      expect(() => new Watchdog(backend, new FakeReporter())).toThrow(InvalidArgumentError);
    });

    it('rejects a backend or reporter without its methods', () => {
      const backend = { maxBatch: 100 } as unknown as FakeBackend;
      expect(() => new Watchdog(backend, new FakeReporter())).toThrow(InvalidArgumentError);
      expect(() => new Watchdog(new FakeBackend(), {} as FakeReporter)).toThrow(InvalidArgumentError);
    });

    it.each([0, -3_000, Number.NaN, Number.POSITIVE_INFINITY])('throws InvalidArgumentError from add for a hold with leaseMs %p', async (leaseMs) => {
      const watchdog = new Watchdog(new FakeBackend(), new FakeReporter());
      expect(() => watchdog.add(new FakeHold('bad', { leaseMs }))).toThrow(InvalidArgumentError);
      await watchdog.close();
    });
  });

  describe('createWatchdog', () => {
    it('makes a factory that gives each client its own Watchdog', async () => {
      const factory = createWatchdog({ maxRetryDelayMs: 500 });
      const first = factory(new FakeBackend(), new FakeReporter());
      const second = factory(new FakeBackend(), new FakeReporter());
      expect(first).toBeInstanceOf(Watchdog);
      expect(second).toBeInstanceOf(Watchdog);
      expect(first).not.toBe(second);
      await Promise.all([first.close(), second.close()]);
    });
  });
});
