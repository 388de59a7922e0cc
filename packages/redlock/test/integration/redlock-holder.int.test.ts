import { hostname } from 'node:os';
import { LockAcquireTimeoutError } from '@org/rlock-core';
import { RedisFleet } from '@org/rlock-testing';
import { RedlockPool, uniquePrefix } from './support.js';

/**
 * A Redlock client names its connections to every master after itself, so a
 * timed-out lock() names the holder found on a master (its lease lock, and
 * that master's CLIENT LIST), as on one Redis.
 */
describe('Redlock: who holds it', () => {
  let fleet: RedisFleet;
  const pool = new RedlockPool();

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 3 });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  it("a timed-out lock() names the holder's client, host and pid, and the lease left", async () => {
    const keyPrefix = uniquePrefix();
    const holder = pool.make(fleet, { keyPrefix, name: 'report-runner' });
    const waiter = pool.make(fleet, { keyPrefix, name: 'report-viewer' });
    await holder.getLock('report').acquire({ leaseMs: 30_000 });
    const error = (await waiter
      .task(() => waiter.getLock('report').lock({ leaseMs: 5_000, waitMs: 100 }))
      .catch((caught: unknown) => caught)) as LockAcquireTimeoutError;
    expect(error).toBeInstanceOf(LockAcquireTimeoutError);
    expect(error.message).toMatch(
      new RegExp(`^lock "report" was not acquired within 100 ms: held by report-runner \\(${hostname()} pid ${process.pid}\\), lease left \\d+\\.\\d s$`),
    );
    expect(error.holder?.owner).toMatch(new RegExp(`^${holder.clientId}:`));
  });
});
