import { resolveClientOptions } from '../../src/client-options.js';
import { InvalidArgumentError } from '../../src/errors.js';

describe('resolveClientOptions', () => {
  it('applies the documented defaults', () => {
    const resolved = resolveClientOptions({ redis: 'redis://127.0.0.1:1' });
    expect(resolved.keyPrefix).toBe('rlock');
    expect(resolved.watchdogTimeoutMs).toBe(30_000);
    expect(resolved.commandTimeoutMs).toBe(5_000);
  });

  it('defaults commandTimeoutMs to a third of a short watchdog lease', () => {
    expect(resolveClientOptions({ redis: 'redis://x:1', watchdogTimeoutMs: 900 }).commandTimeoutMs).toBe(300);
  });

  it('refuses a commandTimeoutMs at or above watchdogTimeoutMs / 3', () => {
    expect(() => resolveClientOptions({ redis: 'redis://x:1', watchdogTimeoutMs: 3000, commandTimeoutMs: 1000 })).toThrow(
      /below watchdogTimeoutMs \/ 3/,
    );
  });

  it.each([
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
