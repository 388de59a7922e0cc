import { createClient, InvalidArgumentError } from '@org/rlock';

describe('createClient', () => {
  it.each([
    ['no options', undefined],
    ['a renewer (the watchdog is wired in)', { redis: 'redis://127.0.0.1:1', renewer: () => undefined }],
    ['a bad watchdog option', { redis: 'redis://127.0.0.1:1', watchdog: { maxRetryDelayMs: -1 } }],
    ['a commandTimeoutMs above ⌊watchdogTimeoutMs / 3⌋', { redis: 'redis://127.0.0.1:1', watchdogTimeoutMs: 300, commandTimeoutMs: 101 }],
    ['a URL that is not redis://', { redis: 'http://127.0.0.1:1' }],
  ])('refuses %s with InvalidArgumentError, before connecting', (_label, options) => {
    expect(() => createClient(options as never)).toThrow(InvalidArgumentError);
  });
});
