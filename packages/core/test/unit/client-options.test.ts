import { resolveClientOptions } from '../../src/client/client-options.js';
import { InvalidArgumentError } from '../../src/errors.js';

describe('resolveClientOptions', () => {
  it('applies the documented defaults', () => {
    const resolved = resolveClientOptions({ redis: 'redis://127.0.0.1:1' });
    expect(resolved.keyPrefix).toBe('rlock');
    expect(resolved.watchdogTimeoutMs).toBe(30_000);
    expect(resolved.commandTimeoutMs).toBe(5_000);
  });

  it('defaults commandTimeoutMs to a third of a short watchdog lease, rounded down', () => {
    expect(resolveClientOptions({ redis: 'redis://x:1', watchdogTimeoutMs: 900 }).commandTimeoutMs).toBe(300);
    expect(resolveClientOptions({ redis: 'redis://x:1', watchdogTimeoutMs: 100 }).commandTimeoutMs).toBe(33);
  });

  it('accepts the default commandTimeoutMs given explicitly, for any watchdog lease', () => {
    for (const watchdogTimeoutMs of [30, 100, 900, 15_000, 30_000]) {
      const { commandTimeoutMs } = resolveClientOptions({ redis: 'redis://x:1', watchdogTimeoutMs });
      expect(resolveClientOptions({ redis: 'redis://x:1', watchdogTimeoutMs, commandTimeoutMs }).commandTimeoutMs).toBe(commandTimeoutMs);
    }
  });

  it('refuses a commandTimeoutMs above ⌊watchdogTimeoutMs / 3⌋, naming both in whole ms', () => {
    expect(() => resolveClientOptions({ redis: 'redis://x:1', watchdogTimeoutMs: 1000, commandTimeoutMs: 334 })).toThrow(
      'commandTimeoutMs (334) must be at most ⌊watchdogTimeoutMs / 3⌋ (333)',
    );
  });

  it('refuses a watchdogTimeoutMs below its floor of 30 ms', () => {
    expect(() => resolveClientOptions({ redis: 'redis://x:1', watchdogTimeoutMs: 29 })).toThrow(
      /from 30 to 2147483647 \(a renewal every third of it\), got 29/,
    );
  });

  it('reports every bad option at once', () => {
    expect(() => resolveClientOptions({ redis: 'redis://x:1', keyPrefix: 'a{b', watchdogTimeoutMs: 1.5, leaseMS: 5 })).toThrow(
      /3 bad options: .*leaseMS.*keyPrefix.*watchdogTimeoutMs/,
    );
  });

  it.each([
    [undefined],
    [{}],
    [{ redis: 'redis://x:1', watchdogTimeoutMs: 1.5 }],
    [{ redis: 'redis://x:1', keyPrefix: 'a{b' }],
    [{ redis: 'redis://x:1', commandTimeoutMs: '5' }],
    [{ redis: 'redis://x:1', leaseMS: 5 }],
    [{ redis: 'redis://x:1', renewer: 3 }],
  ])('refuses %p', (options) => {
    expect(() => resolveClientOptions(options)).toThrow(InvalidArgumentError);
  });
});
