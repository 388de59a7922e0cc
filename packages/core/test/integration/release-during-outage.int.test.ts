import { RedisFleet, takeHoldLeakWarnings } from '@org/rlock-testing';
import type { LockReleasedEvent } from '@org/rlock-core';
import { ClientPool } from './support.js';

// A release that fails while Redis is down is finished in the background.
// With a backoff grown through the outage, its next try could come many
// seconds after Redis is back, keeping the lock from everyone that long.
describe('a release that failed while Redis was down', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1, appendonly: true });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  it('goes out as soon as the connection is back, so a waiter gets the lock within its waitMs', async () => {
    // A long command timeout lets the background backoff grow to many seconds during the outage;
    // the connection itself reconnects every 100 ms, so only that backoff could delay the release.
    const holder = pool.make(fleet.url(0), {
      commandTimeoutMs: 10_000,
      redis: { host: '127.0.0.1', port: fleet.port(0), retryStrategy: () => 100 },
    });
    const released = new Promise<LockReleasedEvent>((resolve) => holder.once('lockReleased', resolve));

    const failed = await holder
      .getLock('outage')
      .withLock(
        async () => {
          await fleet.kill(0);
        },
        { leaseMs: 30_000 },
      )
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(Error);

    // Long enough for several failed background tries, and short of the 30 s lease.
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    await fleet.restart(0);

    // The AOF kept the hold (30 s lease): only the background release can free it this soon.
    const other = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
    await other.task(() => other.getLock('outage').lock({ leaseMs: 5_000, waitMs: 1_500 }));
    expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['outage']);
    // `retry`: the background release found the hold and released it (not `expiry`).
    expect((await released).via).toBe('retry');
  }, 40_000);
});
