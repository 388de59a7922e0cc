import { checkDurationMs } from '../../src/checks/argument-checks.js';
import { InvalidArgumentError } from '../../src/errors.js';

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
