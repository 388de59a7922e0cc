import { createRedlock, InvalidArgumentError, REDLOCK_DEFAULTS } from '@org/rlock';

describe('createRedlock', () => {
  it('is exported with its defaults', () => {
    expect(REDLOCK_DEFAULTS.perNodeTimeoutMs).toBe(50);
    expect(REDLOCK_DEFAULTS.driftFactor).toBe(0.01);
  });

  it.each([
    ['no options', undefined],
    ['no masters', {}],
    ['a renewer (the watchdog is wired in)', { masters: ['redis://127.0.0.1:1'], renewer: () => undefined }],
    ['a bad watchdog option', { masters: ['redis://127.0.0.1:1'], watchdog: { maxRetryDelayMs: -1 } }],
    ['the same master twice', { masters: ['redis://127.0.0.1:1', 'redis://127.0.0.1:1'] }],
  ])('refuses %s with InvalidArgumentError, before connecting', (_label, options) => {
    expect(() => createRedlock(options as never)).toThrow(InvalidArgumentError);
  });

  it('refuses a renewer and bad watchdog options together with the rest', () => {
    const masters = ['redis://127.0.0.1:1', 'redis://127.0.0.1:2', 'redis://127.0.0.1:3'];
    expect(() => createRedlock({ masters, renewer: () => undefined } as never)).toThrow(/renewer/);
    let error: unknown;
    try {
      createRedlock({ masters: [], watchdog: { minRetryDelayMs: 0 } });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(/minRetryDelayMs/);
    expect((error as Error).message).toMatch(/at least one master/);
  });
});
