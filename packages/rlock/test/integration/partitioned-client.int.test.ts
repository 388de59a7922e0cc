import { createClient, type LockLostEvent, type RLockClient } from '@org/rlock';
import { FaultProxy, RedisFleet, uniquePrefix } from '@org/rlock-testing';

// One client cut off from Redis while the others are not: the holder must be
// told it lost the lock before anyone else can have it, and its renewals,
// delivered late when the link heals, must not take it back.
describe('a holder cut off from Redis while the others are not', () => {
  let fleet: RedisFleet;
  let proxy: FaultProxy;
  const clients: RLockClient[] = [];

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  beforeEach(async () => {
    proxy = await FaultProxy.start({ port: fleet.port(0) });
  });
  afterEach(async () => {
    proxy.heal();
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await proxy.stop();
  });
  afterAll(() => fleet.stop());

  it('is told it lost the lock before another client gets it, and its late renewals change nothing', async () => {
    const keyPrefix = uniquePrefix();
    const cutOff = createClient({ redis: proxy.url, keyPrefix, watchdogTimeoutMs: 3_000, commandTimeoutMs: 500 });
    const other = createClient({ redis: fleet.url(0), keyPrefix });
    clients.push(cutOff, other);
    cutOff.on('error', () => undefined);
    const held = await cutOff.getLock('p').acquire();
    let lostAt = Number.NaN;
    const lost = new Promise<LockLostEvent>((resolve) =>
      cutOff.once('lockLost', (event) => {
        lostAt = performance.now();
        resolve(event);
      }),
    );

    proxy.blackhole();
    const waiting = other.getLock('p').acquire({ waitMs: 15_000, leaseMs: 30_000 });
    const taken = await waiting;
    const takenAt = performance.now();

    expect((await lost).reason).toBe('unreachable');
    expect(held.signal.aborted).toBe(true);
    // The holder's deadline is its lease less clock drift, counted from before its last renewal was sent.
    expect(lostAt).toBeLessThanOrEqual(takenAt);
    expect(BigInt(taken.token ?? '0')).toBeGreaterThan(BigInt(held.token ?? '0'));

    // Whatever the cut-off client sent meanwhile arrives now: the lock stays the other's.
    proxy.heal();
    await cutOff.inspect('p');
    const info = await other.inspect('p');
    expect(info?.holders.map((holder) => holder.owner.split(':')[0])).toEqual([other.clientId]);
    await expect(held.unlock()).rejects.toThrow();
    await taken.unlock();
  }, 30_000);
});
