import { RedisFleet } from '@org/rlock-testing';
import { fixture, startChild } from './child-processes.js';
import { ClientPool, uniquePrefix } from './support.js';

// A dead holder's permit stays in `:leases` and `:holders` (pool state, no TTL:
// one that fired would take the permit with it) until the next call on the name
// gives it back; across a crash and an AOF restart count + entries = pool.
describe('RPermitExpirableSemaphore across a Redis crash and an AOF restart', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();

  beforeAll(async () => {
    // 'always': the holder's acquire is on disk when its reply arrives, so the crash keeps it.
    fleet = await RedisFleet.start({ size: 1, appendonly: true, appendfsync: 'always' });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  it("keeps a dead holder's permit as pool state, accounted for, and the next call after its lease gives it back", async () => {
    const prefix = uniquePrefix();
    const [count, leases, holders] = [`${prefix}:{pool}`, `${prefix}:{pool}:leases`, `${prefix}:{pool}:holders`];
    const setup = pool.make(fleet.url(0), { keyPrefix: prefix });
    expect(await setup.getPermitExpirableSemaphore('pool').trySetPermits(2)).toBe(true);
    await pool.closeAll();

    const holder = startChild(fixture('permit-holder.mjs'), { REDIS_URL: fleet.url(0), PREFIX: prefix, KIND: 'permit', LEASE_MS: '1500' });
    const id = (await holder.line(/^acquired /)).slice('acquired '.length);
    holder.process.kill('SIGKILL');
    expect(await holder.exited).toBeNull();
    await fleet.kill(0);
    await fleet.restart(0);

    // Every client is gone; what the AOF brought back is the pool with one permit held.
    const redis = fleet.client(0);
    expect(await redis.get(count)).toBe('1');
    expect(await redis.zrange(leases, '0', '-1')).toEqual([id]);
    expect(await redis.hkeys(holders)).toEqual([id]);
    expect([await redis.pttl(count), await redis.pttl(leases), await redis.pttl(holders)]).toEqual([-1, -1, -1]);

    // Past the lease end on the server's clock, any call on the name gives the permit back.
    const leaseEnd = Number(await redis.zscore(leases, id));
    for (;;) {
      const [seconds, micros] = await redis.time();
      if (Number(seconds) * 1000 + Number(micros) / 1000 > leaseEnd) break;
      await new Promise((resolve) => setTimeout(resolve, leaseEnd - (Number(seconds) * 1000 + Number(micros) / 1000) + 5));
    }
    const later = pool.make(fleet.url(0), { keyPrefix: prefix });
    expect(await later.getPermitExpirableSemaphore('pool').availablePermits()).toBe(2);
    await pool.closeAll();

    // Once reclaimed, only the count and its kind marker are left without a TTL (besides the slot's fence counter).
    expect(await redis.exists(leases, holders)).toBe(0);
    const keys = await redis.keys(`${prefix}:*`);
    const withoutTtl = [];
    for (const key of keys) if ((await redis.pttl(key)) === -1) withoutTtl.push(key);
    expect(withoutTtl.filter((key) => !key.endsWith(':fence')).sort()).toEqual([count, `${count}:kind`]);
  }, 30_000);
});
