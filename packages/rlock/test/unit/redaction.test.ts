import { inspect } from 'node:util';
import { Redis } from 'ioredis';
import {
  ClientClosedError,
  createClient,
  createRedlock,
  IllegalMonitorStateError,
  InvalidArgumentError,
  LockAcquireTimeoutError,
  LockLostError,
  RedisCommandError,
  RedisUnavailableError,
  type RLockError,
} from '@org/rlock';
import { QuorumError } from '@org/rlock-redlock';
import { describeValue, redactedView, redactUrls, resolveClientOptions } from '@org/rlock-core/internal';

const SECRET = 'pa55-w0rd';

/** Closes what a test made, unconnected: port 1 refuses, and nothing here waits on it. */
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('redaction', () => {
  describe('redactUrls', () => {
    it.each([
      ['redis://user:pa55-w0rd@host:6379/2', 'redis://user:***@host:6379/2'],
      ['rediss://:pa55-w0rd@host', 'rediss://:***@host'],
      ['at "redis://user:pa55-w0rd@h:1" and redis://u2:pa55-w0rd@h2:2 both', 'at "redis://user:***@h:1" and redis://u2:***@h2:2 both'],
      // new URL takes the last @ before the host: so does the redaction.
      ['redis://user:pa55@w0rd@host:1', 'redis://user:***@host:1'],
      // A quote inside a JSON-quoted URL is \": it must not end the password early.
      [JSON.stringify('redis://u:pa55"w0rd@h:1'), '"redis://u:***@h:1"'],
      ['redis://host:6379/0', 'redis://host:6379/0'],
      ['redis://user@host:6379', 'redis://user@host:6379'],
    ])('%s reads %s', (text, expected) => {
      expect(redactUrls(text)).toBe(expected);
    });
  });

  describe('messages', () => {
    it.each([
      ['a URL with a bad port', 'redis://user:pa55-w0rd@host:notaport'],
      ['an http URL', 'http://user:pa55-w0rd@host:1'],
      ['an unparsable URL', 'redis://user:pa55-w0rd@[bad'],
    ])("createClient's InvalidArgumentError for %s keeps the user and hides the password", (_label, url) => {
      const error = thrown(() => createClient({ redis: url }));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error.message).toContain('user:***@');
      expect(error.message).not.toContain(SECRET);
      expect(inspect(error)).not.toContain(SECRET);
    });

    it("hides the password of a Cluster node's URL and of a Redlock master's", () => {
      const cluster = thrown(() => createClient({ redis: { cluster: ['http://u:pa55-w0rd@h:1'] } }));
      expect(cluster.message).toContain('u:***@');
      const redlock = thrown(() => createRedlock({ masters: ['redis://u:pa55-w0rd@h:x', 'redis://u:pa55-w0rd@h:2'] }));
      expect(redlock).toBeInstanceOf(InvalidArgumentError);
      expect(redlock.message).toContain('u:***@');
      for (const error of [cluster, redlock]) expect(error.message).not.toContain(SECRET);
    });

    it('hides a URL password in every rlock error, whoever built the message', () => {
      const text = 'no answer from redis://app:pa55-w0rd@10.0.0.7:6379';
      const errors: RLockError[] = [
        new InvalidArgumentError(text),
        new IllegalMonitorStateError(text),
        new LockLostError('x', 'expired', { message: text }),
        new RedisUnavailableError(text),
        new RedisCommandError(text, 'rlock:{x}'),
        new ClientClosedError(text),
        new QuorumError(text, [], 2),
      ];
      for (const error of errors) {
        expect(error.message).toBe('no answer from redis://app:***@10.0.0.7:6379');
        expect(error.stack).not.toContain(SECRET);
      }
      expect(new LockAcquireTimeoutError(text, 5).message).toBe('lock "no answer from redis://app:***@10.0.0.7:6379" was not acquired within 5 ms');
    });

    it('describes a bad string value without its password', () => {
      expect(describeValue('redis://u:pa55-w0rd@h:1')).toBe('"redis://u:***@h:1"');
    });
  });

  describe('client.options', () => {
    it('prints a URL, an options object and a Redis instance without their secrets, and keeps the values given', () => {
      const url = resolveClientOptions({ redis: 'redis://user:pa55-w0rd@127.0.0.1:1' });
      expect(inspect(url)).toContain("redis: 'redis://user:***@127.0.0.1:1'");
      expect(url.redis).toBe('redis://user:pa55-w0rd@127.0.0.1:1');
      const object = resolveClientOptions({ redis: { host: '127.0.0.1', port: 1, username: 'user', password: SECRET, tls: { key: SECRET, ca: 'pem' } } });
      expect(inspect(object, { depth: 5 })).toContain("password: '***'");
      expect(JSON.stringify(object)).toContain('"key":"***"');
      const redis = new Redis({ host: '127.0.0.1', port: 1, username: 'user', password: SECRET, lazyConnect: true });
      const instance = resolveClientOptions({ redis });
      expect(inspect(instance)).toContain('[Redis redis://user:***@127.0.0.1:1]');
      for (const options of [url, object, instance]) {
        expect(inspect(options, { depth: 10 })).not.toContain(SECRET);
        expect(JSON.stringify(options)).not.toContain(SECRET);
        expect({ ...options }.redis).toBe(options.redis);
      }
      redis.disconnect();
    });
  });

  describe('util.inspect', () => {
    it('shows a client, its name and id, without a password anywhere', () => {
      const client = createClient({ redis: 'redis://user:pa55-w0rd@127.0.0.1:1' });
      closers.push(() => client.close());
      const printed = inspect(client, { depth: 20 });
      expect(printed).toMatch(/^RLockClient \{/);
      expect(printed).toContain(client.clientId);
      expect(printed).toContain('user:***@127.0.0.1:1');
      expect(printed).not.toContain(SECRET);
      expect(inspect({ nested: { client } }, { depth: 20 })).not.toContain(SECRET);
    });

    it("shows a Redlock client without its masters' passwords", () => {
      const redlock = createRedlock({ masters: [1, 2, 3].map((port) => `redis://user:pa55-w0rd@127.0.0.1:${port}`) });
      closers.push(() => redlock.close());
      const printed = inspect(redlock, { depth: 20 });
      expect(printed).toMatch(/^RedlockClient \{/);
      expect(printed).toContain('user:***@127.0.0.1:3');
      expect(printed).not.toContain(SECRET);
      expect(inspect(redlock.options, { depth: 20 })).not.toContain(SECRET);
    });

    it('views an ioredis option tree with the secret options hidden and cycles cut', () => {
      const tree: Record<string, unknown> = { sentinelPassword: SECRET, redisOptions: { password: SECRET, tls: { passphrase: SECRET, pfx: SECRET } } };
      tree.self = tree;
      const printed = inspect(redactedView(tree), { depth: 10 });
      expect(printed).not.toContain(SECRET);
      expect(printed).toContain('[Circular]');
    });
  });
});
