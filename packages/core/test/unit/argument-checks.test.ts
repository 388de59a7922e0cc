import { checkDurationMs } from '../../src/checks/argument-checks.js';
import { InvalidArgumentError } from '../../src/errors.js';
import { parseLockOptions } from '../../src/objects/lock-options.js';

describe('checkDurationMs', () => {
  it.each([0, -1, Number.NaN, Infinity, 1.5, '100', null, undefined, 2 ** 31])('refuses %p as a lease', (value) => {
    expect(() => checkDurationMs(value, 'leaseMs')).toThrow(InvalidArgumentError);
  });

  it('accepts integers from 1 to 2^31 - 1, and 0 where allowed', () => {
    expect(checkDurationMs(1, 'leaseMs')).toBe(1);
    expect(checkDurationMs(2 ** 31 - 1, 'leaseMs')).toBe(2 ** 31 - 1);
    expect(checkDurationMs(0, 'waitMs', 0)).toBe(0);
    expect(() => checkDurationMs(-1, 'waitMs', 0)).toThrow(/waitMs must be an integer/);
  });
});

describe('parseLockOptions', () => {
  it('states one range for leaseMs, whichever end a value misses', () => {
    const range = 'lock(): leaseMs must be an integer number of ms from 3 to 2147483647 (the lease minus its drift allowance must be positive)';
    for (const leaseMs of [-1, 2, 2 ** 31]) {
      expect(() => parseLockOptions({ leaseMs }, 'lock')).toThrow(`${range}, got ${leaseMs}`);
    }
    expect(parseLockOptions({ leaseMs: 3 }, 'lock').leaseMs).toBe(3);
  });
});
