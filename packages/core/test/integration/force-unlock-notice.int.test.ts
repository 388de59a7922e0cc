import { Redis } from 'ioredis';
import { RedisFleet } from '@org/rlock-testing';
import { LockLostError, type LockLostEvent, type RLockClient } from '@org/rlock-core';
import { ClientPool, eventually } from './support.js';

/** A lease no renewal or expiry can end within a test: only the notice explains a prompt loss. */
const LEASE_MS = 30_000;
/** How long a notice may take to arrive: a bound on waiting, far below the lease. */
const NOTICE_WITHIN_MS = 5_000;
/** A force-unlock right after a client's first grant is told within this (issue 37's bound). */
const FIRST_HOLD_TOLD_MS = 1_000;

/** The next `lockLost` of `client` for `name`, or undefined once `timeoutMs` passed. */
function nextLoss(client: RLockClient, name: string, timeoutMs = NOTICE_WITHIN_MS): Promise<LockLostEvent | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      client.off('lockLost', listener);
      resolve(undefined);
    }, timeoutMs);
    const listener = (event: LockLostEvent): void => {
      if (event.name !== name) return;
      clearTimeout(timer);
      client.off('lockLost', listener);
      resolve(event);
    };
    client.on('lockLost', listener);
  });
}

type Holding = [
  string,
  (client: RLockClient, name: string) => Promise<{ signal: AbortSignal; token: string | undefined }>,
  (client: RLockClient, name: string) => Promise<boolean>,
];

const holdings: Holding[] = [
  ['lock', (client, name) => client.getLock(name).acquire({ leaseMs: LEASE_MS }), (client, name) => client.getLock(name).forceUnlock()],
  ['fair lock', (client, name) => client.getFairLock(name).acquire({ leaseMs: LEASE_MS }), (client, name) => client.getFairLock(name).forceUnlock()],
  [
    'write lock',
    (client, name) => client.getReadWriteLock(name).writeLock().acquire({ leaseMs: LEASE_MS }),
    (client, name) => client.getReadWriteLock(name).writeLock().forceUnlock(),
  ],
  [
    'read lock',
    (client, name) => client.getReadWriteLock(name).readLock().acquire({ leaseMs: LEASE_MS }),
    // Force-unlocked through the other mode: every holder of the name is released, and told.
    (client, name) => client.getReadWriteLock(name).writeLock().forceUnlock(),
  ],
];

/** Resolves once the client's notice channel is subscribed (before its first hold's acquire is sent). */
async function listening(fleet: RedisFleet, client: RLockClient): Promise<void> {
  const channel = `${client.options.keyPrefix}:client:${client.clientId}`;
  const subscribed = async (): Promise<boolean> => Number(((await fleet.client(0).pubsub('NUMSUB', channel)) as [string, number])[1]) === 1;
  expect(await eventually(subscribed, NOTICE_WITHIN_MS)).toBe(true);
}

describe('forceUnlock', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();
  const connections: Redis[] = [];

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(async () => {
    connections.splice(0).forEach((connection) => connection.disconnect());
    await pool.closeAll();
  });
  afterAll(() => fleet.stop());

  describe("tells the holder's client at once", () => {
    it.each(holdings)('ends a %s held by another client with reason forced, long before its lease would', async (_kind, hold, force) => {
      const holder = pool.make(fleet.url(0));
      const admin = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
      const handle = await hold(holder, 'held');
      await listening(fleet, holder);
      const loss = nextLoss(holder, 'held');
      const forcedAt = performance.now();
      expect(await force(admin, 'held')).toBe(true);
      const event = await loss;
      expect(event?.reason).toBe('forced');
      expect(event?.token).toBe(handle.token);
      expect(performance.now() - forcedAt).toBeLessThan(NOTICE_WITHIN_MS);
      expect(handle.signal.aborted).toBe(true);
      expect(handle.signal.reason).toBeInstanceOf(LockLostError);
      expect((handle.signal.reason as LockLostError).reason).toBe('forced');
    });

    it.each(holdings)(
      "ends a %s forced the moment its client's first hold is granted (the notice channel is heard from the first hold on)",
      async (_kind, hold, force) => {
        const holder = pool.make(fleet.url(0));
        const admin = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
        // The admin's connection is up already, so its force goes out at once.
        expect(await admin.getLock('first').isLocked()).toBe(false);
        const handle = await hold(holder, 'first');
        const loss = nextLoss(holder, 'first', FIRST_HOLD_TOLD_MS);
        expect(await force(admin, 'first')).toBe(true);
        const event = await loss;
        expect(event?.reason).toBe('forced');
        expect(handle.signal.aborted).toBe(true);
        expect((handle.signal.reason as LockLostError).reason).toBe('forced');
      },
    );

    it('ends the write and the read hold of one task (a downgrade in progress), each by its own token', async () => {
      const holder = pool.make(fleet.url(0));
      const admin = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
      const rw = holder.getReadWriteLock('doc');
      const write = await rw.writeLock().acquire({ leaseMs: LEASE_MS });
      const read = await write.run(() => rw.readLock().acquire({ leaseMs: LEASE_MS }));
      await listening(fleet, holder);
      const reasons: string[] = [];
      holder.on('lockLost', (event) => reasons.push(event.reason));
      const bothLost = new Promise<void>((resolve) => {
        const check = (): void => {
          if (write.signal.aborted && read.signal.aborted) resolve();
        };
        write.signal.addEventListener('abort', check);
        read.signal.addEventListener('abort', check);
      });
      expect(await admin.getReadWriteLock('doc').readLock().forceUnlock()).toBe(true);
      await expect(Promise.race([bothLost.then(() => 'lost'), new Promise((resolve) => setTimeout(resolve, NOTICE_WITHIN_MS, 'timeout'))])).resolves.toBe(
        'lost',
      );
      expect(reasons).toEqual(['forced', 'forced']);
    });

    it('does not end a newer hold when an old notice comes again (its token is another)', async () => {
      const holder = pool.make(fleet.url(0));
      const admin = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
      const prefix = holder.options.keyPrefix;
      const first = await holder.getLock('x').acquire({ leaseMs: LEASE_MS });
      await listening(fleet, holder);
      // What the force-unlock publishes, as any subscriber of the holder's channel hears it.
      const listener = new Redis(fleet.port(0), '127.0.0.1');
      connections.push(listener);
      const notices: string[] = [];
      listener.on('message', (_channel: string, message: string) => notices.push(message));
      await listener.subscribe(`${prefix}:client:${holder.clientId}`);

      const firstLoss = nextLoss(holder, 'x');
      await admin.getLock('x').forceUnlock();
      const lost = await firstLoss;
      expect(lost?.reason).toBe('forced');
      expect(await eventually(() => notices.length === 1, NOTICE_WITHIN_MS)).toBe(true);
      expect(notices).toEqual([`forced ${lost?.owner} ${first.token} ${prefix}:{x}`]);

      const second = await holder.getLock('x').acquire({ leaseMs: LEASE_MS });
      const other = await holder.getLock('y').acquire({ leaseMs: LEASE_MS });
      await fleet.client(0).publish(`${prefix}:client:${holder.clientId}`, notices[0] as string);
      // Messages on one channel arrive in order: once y's notice is heard, the replay was too.
      const otherLoss = nextLoss(holder, 'y');
      await admin.getLock('y').forceUnlock();
      expect((await otherLoss)?.reason).toBe('forced');
      expect(other.signal.aborted).toBe(true);
      expect(second.signal.aborted).toBe(false);
      expect(await holder.getLock('x').isLocked()).toBe(true);
      await second.unlock();
    });
  });
});
