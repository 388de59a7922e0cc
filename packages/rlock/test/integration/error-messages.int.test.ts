import { createServer } from 'node:net';
import { LockAcquireTimeoutError, QuorumError, RedisUnavailableError, createClient, createRedlock, type RedlockClient, type RLockClient } from '@org/rlock';
import { RedisFleet, uniquePrefix } from '@org/rlock-testing';

/** A port nothing listens on: connections to it are refused. */
const freePort = (): Promise<number> =>
  new Promise<number>((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

const failureOf = (call: () => Promise<unknown>): Promise<Error> =>
  call().then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error as Error,
  );

/** When Redis is why a call failed, its own message says so and names the lock (not an internal key or channel). */
describe('errors that name their cause', () => {
  let fleet: RedisFleet;
  const clients: (RLockClient | RedlockClient)[] = [];
  const track = <T extends RLockClient | RedlockClient>(client: T): T => {
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(() => fleet.stop());

  describe('Redis refusing connections', () => {
    it('fails withLock() naming the lock and that Redis is unavailable, not the channel it subscribes to', async () => {
      const client = track(createClient({ redis: `redis://127.0.0.1:${await freePort()}`, keyPrefix: uniquePrefix() }));
      const error = await failureOf(() => client.getLock('a').withLock(() => undefined));
      expect(error).toBeInstanceOf(RedisUnavailableError);
      expect(error.message).toMatch(/^lock "a" was not acquired: Redis is unavailable \(connect ECONNREFUSED [\d.:]+\)$/);
      expect((error.cause as { code?: string }).code).toBe('ECONNREFUSED');
    });

    it('times out a call with waitMs saying that Redis is unavailable, with the failure as cause', async () => {
      const client = track(createClient({ redis: `redis://127.0.0.1:${await freePort()}`, keyPrefix: uniquePrefix() }));
      for (const call of [() => client.getLock('a').withLock(() => undefined, { waitMs: 300 }), () => client.getLock('a').acquire({ waitMs: 300 })]) {
        const error = await failureOf(call);
        expect(error).toBeInstanceOf(LockAcquireTimeoutError);
        expect(error.message).toMatch(/^lock "a" was not acquired within 300 ms: Redis is unavailable \(connect ECONNREFUSED [\d.:]+\)$/);
        expect(error.cause).toBeInstanceOf(RedisUnavailableError);
      }
    });
  });

  describe('Redis not answering', () => {
    it('times out a call with waitMs saying that Redis did not answer for the lock', async () => {
      const client = track(createClient({ redis: fleet.url(0), keyPrefix: uniquePrefix() }));
      await client.getLock('warm').withLock(() => undefined, { leaseMs: 1_000 });
      await fleet.pause(0);
      try {
        const error = await failureOf(() => client.getLock('hang').withLock(() => undefined, { waitMs: 500, leaseMs: 5_000 }));
        expect(error).toBeInstanceOf(LockAcquireTimeoutError);
        expect(error.message).toMatch(
          /^lock "hang" was not acquired within 500 ms: Redis did not answer for "hang": a try or its SUBSCRIBE had been out \d+ ms when waitMs \(500 ms\) ran out$/,
        );
        expect(error.cause).toBeInstanceOf(RedisUnavailableError);
      } finally {
        await fleet.resume(0);
      }
    });
  });

  describe('Redlock with 2 of 3 masters down', () => {
    it('times out a call with waitMs saying that no majority answered, with the QuorumError as cause', async () => {
      const masters = [fleet.url(0), `redis://127.0.0.1:${await freePort()}`, `redis://127.0.0.1:${await freePort()}`];
      // No quarantine: the one master up (started moments ago) votes at once.
      const redlock = track(createRedlock({ masters, keyPrefix: uniquePrefix(), restartQuarantineMs: 0 }));
      const error = await failureOf(() => redlock.getLock('a').withLock(() => undefined, { waitMs: 500 }));
      expect(error).toBeInstanceOf(LockAcquireTimeoutError);
      expect(error.message).toMatch(/^lock "a" was not acquired within 500 ms: no majority of the Redlock masters answered \(2 of 3 masters failed/);
      expect(error.cause).toBeInstanceOf(QuorumError);
      expect((error.cause as QuorumError).votes.filter((vote) => vote.error !== undefined)).toHaveLength(2);
    });
  });
});
