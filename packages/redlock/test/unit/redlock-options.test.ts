import { Redis } from 'ioredis';
import { InvalidArgumentError } from '@org/rlock-core';
import { RedlockClient, REDLOCK_DEFAULTS } from '@org/rlock-redlock';
import { resolveRedlockOptions } from '../../src/options.js';

const masters = ['redis://127.0.0.1:1', 'redis://127.0.0.1:2', 'redis://127.0.0.1:3'];

describe('Redlock options', () => {
  describe('resolveRedlockOptions', () => {
    it('applies the documented defaults', () => {
      const resolved = resolveRedlockOptions({ masters });
      expect(resolved.keyPrefix).toBe('rlock');
      expect(resolved.watchdogTimeoutMs).toBe(30_000);
      expect(resolved.commandTimeoutMs).toBe(5_000);
      expect(resolved.driftFactor).toBe(0.01);
      expect(resolved.perNodeTimeoutMs).toBe(50);
      expect(resolved.retry).toEqual({ minDelayMs: 5, maxDelayMs: 200, factor: 2 });
      expect(resolved.masterNames).toEqual(masters);
      expect(resolved.restartQuarantineMs).toBe(30_000);
      expect(Object.isFrozen(REDLOCK_DEFAULTS)).toBe(true);
    });

    it('quarantines a restarted master for the watchdog lease unless told otherwise, and takes 0 to turn it off', () => {
      expect(resolveRedlockOptions({ masters, watchdogTimeoutMs: 90_000 }).restartQuarantineMs).toBe(90_000);
      expect(resolveRedlockOptions({ masters, restartQuarantineMs: 120_000 }).restartQuarantineMs).toBe(120_000);
      expect(resolveRedlockOptions({ masters, restartQuarantineMs: 0 }).restartQuarantineMs).toBe(0);
    });

    it('derives commandTimeoutMs and perNodeTimeoutMs from a short watchdog lease', () => {
      const resolved = resolveRedlockOptions({ masters, watchdogTimeoutMs: 90 });
      expect(resolved.commandTimeoutMs).toBe(30);
      expect(resolved.perNodeTimeoutMs).toBe(30);
    });

    it('accepts ioredis options and instances and names them without credentials', () => {
      const instance = new Redis({ host: '127.0.0.1', port: 4, lazyConnect: true });
      const resolved = resolveRedlockOptions({
        masters: ['redis://user:secret@127.0.0.1:1', { host: '127.0.0.1', port: 2 }, instance],
      });
      expect(resolved.masterNames).toEqual(['redis://127.0.0.1:1', 'redis://127.0.0.1:2', 'redis://127.0.0.1:4']);
      instance.disconnect();
    });

    it('reports every bad option at once', () => {
      let error: unknown;
      try {
        resolveRedlockOptions({
          masters: ['redis://127.0.0.1:1', 'http://x'],
          keyPrefix: 'a{b',
          watchdogTimeoutMs: 1.5,
          driftFactor: 2,
          perNodeTimeoutMs: 0,
          retry: { minDelayMs: 300, maxDelayMs: 100, jitter: true },
          leaseMS: 5,
        });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(InvalidArgumentError);
      const message = (error as Error).message;
      for (const part of [
        'masters[1]',
        'keyPrefix',
        'watchdogTimeoutMs',
        'driftFactor',
        'perNodeTimeoutMs',
        'retry.minDelayMs',
        'retry: 2 bad options: unknown option "jitter"',
        'unknown option "leaseMS"',
      ]) {
        expect(message).toContain(part);
      }
    });

    it.each([
      ['no options', undefined],
      ['no masters', {}],
      ['an empty list', { masters: [] }],
      ['a string', { masters: 'redis://127.0.0.1:1' }],
      ['the same master twice', { masters: ['redis://127.0.0.1:1', 'redis://localhost:1'] }],
      ['the same options twice', { masters: [{ port: 7 }, { host: 'localhost', port: 7 }] }],
      ['a connection with its own keyPrefix', { masters: [{ port: 1, keyPrefix: 'x:' }] }],
      ['a Cluster', { masters: [{ isCluster: true }] }],
      ['a number', { masters: [6379] }],
      ['a commandTimeoutMs above a third of the lease', { masters, watchdogTimeoutMs: 3_000, commandTimeoutMs: 1_001 }],
      ['a perNodeTimeoutMs above commandTimeoutMs', { masters, commandTimeoutMs: 100, perNodeTimeoutMs: 101 }],
      ['a negative driftFactor', { masters, driftFactor: -0.1 }],
      ['a retry factor below 1', { masters, retry: { factor: 0.5 } }],
      ['a renewer that is not a function', { masters, renewer: 3 }],
      ['a negative restartQuarantineMs', { masters, restartQuarantineMs: -1 }],
      ['a fractional restartQuarantineMs', { masters, restartQuarantineMs: 1.5 }],
      ['a restartQuarantineMs that is not a number', { masters, restartQuarantineMs: '30s' }],
    ])('refuses %s', (_, options) => {
      expect(() => resolveRedlockOptions(options)).toThrow(InvalidArgumentError);
    });

    it('tells distinct databases of one server apart', () => {
      expect(() => resolveRedlockOptions({ masters: ['redis://127.0.0.1:1/0', 'redis://127.0.0.1:1/1'] })).not.toThrow();
    });
  });

  describe('RedlockClient', () => {
    it('throws before connecting', () => {
      expect(() => new RedlockClient({ masters: ['redis://127.0.0.1:1', 'redis://127.0.0.1:1'] })).toThrow(InvalidArgumentError);
    });
  });
});
