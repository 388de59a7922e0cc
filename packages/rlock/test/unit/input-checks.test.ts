import { createClient, createRedlock, InvalidArgumentError, RedisUnavailableError, type RLockClient } from '@org/rlock';
import { resolveClientOptions } from '@org/rlock-core/internal';

/** Lone surrogates: each reaches Redis as U+FFFD, so all would name one key. */
const LONE_SURROGATES = ['\uD800', '\uDC00', 'order:\uD800', '\uDC00\uD800', 'a\uDBFFb'];

/** A client of a port that refuses: nothing here may reach Redis, and what does fails at once. */
function offlineClient(): RLockClient {
  const client = createClient({ redis: 'redis://127.0.0.1:1', watchdogTimeoutMs: 300 });
  client.on('error', () => undefined);
  return client;
}

describe('input checks', () => {
  let client: RLockClient;
  beforeEach(() => {
    client = offlineClient();
  });
  afterEach(() => client.close());

  describe('names are well-formed Unicode', () => {
    const getters: [string, (name: string) => unknown][] = [
      ['getLock', (name) => client.getLock(name)],
      ['getFairLock', (name) => client.getFairLock(name)],
      ['getReadWriteLock', (name) => client.getReadWriteLock(name)],
      ['getNonReentrantLock', (name) => client.getNonReentrantLock(name)],
      ['getSpinLock', (name) => client.getSpinLock(name)],
      ['getNonReentrantFairLock', (name) => client.getNonReentrantFairLock(name)],
      ['getSemaphore', (name) => client.getSemaphore(name)],
      ['getPermitExpirableSemaphore', (name) => client.getPermitExpirableSemaphore(name)],
      ['getCountDownLatch', (name) => client.getCountDownLatch(name)],
      ['getLeaderElection', (name) => client.getLeaderElection(name)],
    ];

    it.each(getters)('%s refuses a name with a lone surrogate, synchronously, and takes U+FFFD and paired surrogates', (_getter, get) => {
      for (const name of LONE_SURROGATES) {
        expect(() => get(name)).toThrow(InvalidArgumentError);
        expect(() => get(name)).toThrow(/must be well-formed Unicode/);
      }
      for (const name of ['\uFFFD', 'order:\uFFFD', '😀', 'ünïcode']) expect(() => get(name)).not.toThrow();
    });

    it('refuses one in a Redlock lock name, inspect(), list({ match }), keyPrefix and the client name', async () => {
      const redlock = createRedlock({ masters: ['redis://127.0.0.1:1', 'redis://127.0.0.1:2', 'redis://127.0.0.1:3'] });
      try {
        expect(() => redlock.getLock('\uD800')).toThrow(InvalidArgumentError);
      } finally {
        await redlock.close();
      }
      await expect(client.inspect('\uDC00')).rejects.toThrow(InvalidArgumentError);
      await expect(client.list({ match: 'order:\uD800*' }).next()).rejects.toThrow(InvalidArgumentError);
      expect(() => createClient({ redis: 'redis://127.0.0.1:1', keyPrefix: 'app\uD800' })).toThrow(InvalidArgumentError);
      // Percent-encoding it for CLIENT SETNAME threw a URIError.
      expect(() => createClient({ redis: 'redis://127.0.0.1:1', name: 'api\uDC00' })).toThrow(InvalidArgumentError);
    });

    it('names the escaped surrogate in the message', () => {
      expect(() => client.getLock('a\uD800')).toThrow('lock name must be well-formed Unicode (a lone surrogate would reach Redis as U+FFFD), got "a\\ud800"');
    });
  });

  // The option parsers' own-property tests live with them (core's own-options, the watchdog's options).
  describe('options are own properties', () => {
    it('does not honour a client option inherited through the prototype', () => {
      expect(resolveClientOptions({ redis: 'redis://127.0.0.1:1', __proto__: { keyPrefix: 'inherited', watchdogTimeoutMs: 90 } })).toMatchObject({
        keyPrefix: 'rlock',
        watchdogTimeoutMs: 30_000,
      });
      expect(() => resolveClientOptions({ __proto__: { redis: 'redis://127.0.0.1:1' } })).toThrow(/redis is required/);
    });

    it('does not honour an option a polluted Object.prototype carries', () => {
      const polluted = Object.prototype as Record<string, unknown>;
      polluted.watchdog = { minRetryDelayMs: -1 };
      try {
        // createClient reads `watchdog` too: an inherited bad one would have been refused.
        const created = createClient({ redis: 'redis://127.0.0.1:1' });
        void created.close();
      } finally {
        delete polluted.watchdog;
      }
    });
  });

  describe('permit ids are capped like names', () => {
    it('refuses an id over 1,024 UTF-8 bytes or with a lone surrogate before any command', async () => {
      const semaphore = client.getPermitExpirableSemaphore('gpu');
      for (const id of ['x'.repeat(1025), 'é'.repeat(513), 'x'.repeat(1024 * 1024), '\uD800', `${'x'.repeat(10)}\uDC00`, '', 7]) {
        await expect(semaphore.release(id as string)).rejects.toThrow(InvalidArgumentError);
      }
      await expect(semaphore.release('x'.repeat(1025))).rejects.toThrow('release(id): id must be at most 1024 bytes in UTF-8');
    });

    it('sends an id of exactly 1,024 bytes (here to a port that refuses)', async () => {
      await expect(client.getPermitExpirableSemaphore('gpu').release('x'.repeat(1024))).rejects.toThrow(RedisUnavailableError);
    });
  });
});
