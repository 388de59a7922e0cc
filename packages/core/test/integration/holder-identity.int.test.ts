import { hostname } from 'node:os';
import { LockAcquireTimeoutError, type RLockClient } from '@org/rlock-core';
import { RedisFleet } from '@org/rlock-testing';
import { ClientPool } from './support.js';

/**
 * A holder's owner id is traced to its client's name, host and pid through
 * the names of the connections rlock creates (CLIENT SETNAME) and CLIENT
 * LIST: nothing is added to any key.
 */
describe('who holds it', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
    // A user that may do everything but CLIENT LIST, as a restrictive ACL would.
    const admin = fleet.client(0);
    await admin.call('ACL', 'SETUSER', 'no-client-list', 'on', '>secret', '~*', '&*', '+@all', '-client|list');
    await admin.quit();
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  /** Client `name` holding `lockName` for 30 s (a fixed lease, no watchdog in core). */
  async function holding(lockName: string, keyPrefix: string, name?: string): Promise<RLockClient> {
    const holder = pool.make(fleet.url(0), { keyPrefix, ...(name === undefined ? {} : { name }) });
    await holder.getLock(lockName).acquire({ leaseMs: 30_000 });
    return holder;
  }

  describe('client.inspect()', () => {
    it("shows the holder's client name, host and pid, read by another client", async () => {
      const holder = await holding('order:1', 'who-1', 'orders-api');
      const reader = pool.make(fleet.url(0), { keyPrefix: 'who-1', name: 'billing' });
      const info = await reader.inspect('order:1');
      expect(info?.holders[0]?.owner).toMatch(new RegExp(`^${holder.clientId}:`));
      expect(info?.holders[0]?.client).toEqual({ name: 'orders-api', host: hostname(), pid: process.pid });
      expect(holder.identity).toEqual({ name: 'orders-api', host: hostname(), pid: process.pid });
    });

    it('names a client `<hostname>:<pid>` by default, and keeps a name with spaces and colons intact', async () => {
      await holding('order:2', 'who-2');
      const odd = await holding('order:3', 'who-2', 'night batch: ünïcode');
      const reader = pool.make(fleet.url(0), { keyPrefix: 'who-2' });
      expect((await reader.inspect('order:2'))?.holders[0]?.client?.name).toBe(`${hostname()}:${process.pid}`);
      expect((await reader.inspect('order:3'))?.holders[0]?.client?.name).toBe('night batch: ünïcode');
      expect(odd.identity.name).toBe('night batch: ünïcode');
    });

    it('shows the owner id only when the ACL refuses CLIENT LIST', async () => {
      await holding('order:4', 'who-3', 'orders-api');
      const reader = pool.make(`redis://no-client-list:secret@127.0.0.1:${fleet.port(0)}`, { keyPrefix: 'who-3' });
      const info = await reader.inspect('order:4');
      expect(info?.holders[0]?.owner).toBeDefined();
      expect(info?.holders[0]?.client).toBeUndefined();
    });
  });

  describe('LockAcquireTimeoutError', () => {
    it('names the holder: its client name, host and pid, how long it has held the lock and the lease left', async () => {
      const holder = await holding('order:5', 'who-4', 'orders-api');
      const waiter = pool.make(fleet.url(0), { keyPrefix: 'who-4', name: 'billing' });
      const startedAt = performance.now();
      const error = (await waiter
        .task(() => waiter.getLock('order:5').lock({ leaseMs: 5_000, waitMs: 100 }))
        .catch((caught: unknown) => caught)) as LockAcquireTimeoutError;
      expect(error).toBeInstanceOf(LockAcquireTimeoutError);
      expect(error.message).toMatch(
        new RegExp(
          `^lock "order:5" was not acquired within 100 ms: held by orders-api \\(${hostname()} pid ${process.pid}\\) for \\d+\\.\\d s, lease left \\d+\\.\\d s$`,
        ),
      );
      expect(error.holder?.owner).toMatch(new RegExp(`^${holder.clientId}:`));
      expect(error.holder?.ttlMs).toBeGreaterThan(20_000);
      // One bounded lookup after the wait: well under a second on a local server.
      expect(performance.now() - startedAt).toBeLessThan(1_000);
    });

    it('drops a lookup the server does not answer within 200 ms, and names the holder again once it answers', async () => {
      await holding('order:7', 'who-6', 'orders-api');
      const waiter = pool.make(fleet.url(0), { keyPrefix: 'who-6' });
      const lock = waiter.getLock('order:7');
      const startedAt = performance.now();
      const waiting = waiter.task(() => lock.lock({ leaseMs: 5_000, waitMs: 1_000 })).catch((caught: unknown) => caught);
      // Half-way through the wait the waiter sleeps on its channel (its first
      // try was refused long before): the pause holds only the lookup.
      await new Promise((resolve) => setTimeout(resolve, 500));
      await fleet.clientPause(0, 2_500);
      const error = (await waiting) as LockAcquireTimeoutError;
      const elapsedMs = performance.now() - startedAt;
      expect(error).toBeInstanceOf(LockAcquireTimeoutError);
      expect(error.message).toBe('lock "order:7" was not acquired within 1000 ms');
      expect(error.holder).toBeUndefined();
      expect(elapsedMs).toBeLessThan(1_000 + 200 + 600);
      // Once the pause is over (a PING is held until then) the lookup answers again.
      const admin = fleet.client(0);
      await admin.ping();
      await admin.quit();
      const again = (await waiter.task(() => lock.lock({ leaseMs: 5_000, waitMs: 50 })).catch((caught: unknown) => caught)) as LockAcquireTimeoutError;
      expect(again.message).toContain(`held by orders-api (${hostname()} pid ${process.pid})`);
    });

    it('says the owner id when the holder cannot be named (CLIENT LIST refused)', async () => {
      const holder = await holding('order:6', 'who-5', 'orders-api');
      const waiter = pool.make(`redis://no-client-list:secret@127.0.0.1:${fleet.port(0)}`, { keyPrefix: 'who-5' });
      const error = (await waiter
        .task(() => waiter.getLock('order:6').lock({ leaseMs: 5_000, waitMs: 50 }))
        .catch((caught: unknown) => caught)) as LockAcquireTimeoutError;
      expect(error.message).toMatch(new RegExp(`held by ${holder.clientId}:\\S+ for \\d+\\.\\d s, lease left`));
      expect(error.holder?.client).toBeUndefined();
    });
  });
});
