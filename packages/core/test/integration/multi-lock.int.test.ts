import { RedisFleet, takeHoldLeakWarnings } from '@org/rlock-testing';
import { InvalidArgumentError, LockAcquireTimeoutError, LockLostError } from '@org/rlock-core';
import { ClientPool, eventually, holdAt } from './support.js';

describe('multi-lock', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  it('is all or nothing: a member held elsewhere leaves none of the others taken', async () => {
    const client = pool.make(fleet.url(0));
    const other = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
    const held = await other.getLock('b').acquire({ leaseMs: 30_000 });
    const multi = client.getMultiLock([client.getLock('a'), client.getLock('b'), client.getFairLock('c')]);
    expect(await client.task(() => multi.tryLock({ leaseMs: 5_000, waitMs: 100 }))).toBe(false);
    expect(await client.getLock('a').isLocked()).toBe(false);
    expect(await client.getFairLock('c').isLocked()).toBe(false);
    await held.unlock();
    expect(await client.task(() => multi.tryLock({ leaseMs: 5_000 }))).toBe(true);
    expect(
      takeHoldLeakWarnings()
        .map(({ name }) => name)
        .sort(),
    ).toEqual(['a', 'b', 'c']);
    expect(await multi.isLocked()).toBe(true);
  });

  it('names the holder of the member it waited for in vain, from lock() as from acquire()', async () => {
    const client = pool.make(fleet.url(0));
    const other = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
    const held = await other.getLock('b').acquire({ leaseMs: 30_000 });
    const holder = await other.inspect('b');
    const multi = client.getMultiLock([client.getLock('a'), client.getLock('b')]);
    const fromLock = await client.task(() => multi.lock({ leaseMs: 5_000, waitMs: 100 })).catch((error: unknown) => error);
    const fromAcquire = await multi.acquire({ leaseMs: 5_000, waitMs: 100 }).catch((error: unknown) => error);
    for (const error of [fromLock, fromAcquire]) {
      expect(error).toBeInstanceOf(LockAcquireTimeoutError);
      expect((error as LockAcquireTimeoutError).holder?.owner).toBe(holder?.holders[0]?.owner);
    }
    expect(holder?.holders[0]?.owner).toBeDefined();
    expect(await client.getLock('a').isLocked()).toBe(false);
    await held.unlock();
  });

  it('never deadlocks two callers listing the same locks in opposite orders', async () => {
    const first = pool.make(fleet.url(0));
    const second = pool.make(fleet.url(0), { keyPrefix: first.options.keyPrefix });
    const forward = first.getMultiLock([first.getLock('x'), first.getLock('y'), first.getLock('z')]);
    const backward = second.getMultiLock([second.getLock('z'), second.getLock('y'), second.getLock('x')]);
    let inside = 0;
    let most = 0;
    const run = (multi: typeof forward) =>
      Array.from({ length: 4 }, () =>
        (async () => {
          for (let round = 0; round < 15; round++) {
            await multi.withLock(
              async () => {
                most = Math.max(most, ++inside);
                await new Promise((resolve) => setImmediate(resolve));
                inside--;
              },
              { leaseMs: 10_000, waitMs: 20_000 },
            );
          }
        })(),
      );
    await Promise.all([...run(forward), ...run(backward)]);
    expect(most).toBe(1);
  });

  it("hands out each member's token in the order given, and aborts its signal when any member is lost", async () => {
    const client = pool.make(fleet.url(0));
    const multi = client.getMultiLock([client.getLock('m2'), client.getLock('m1')]);
    const outcome = multi.withLock(
      async ({ signal, tokens, token }) => {
        expect(token).toBeUndefined();
        expect(tokens).toHaveLength(2);
        const [t2, t1] = tokens;
        expect(t2).toBe((await holdAt(fleet.client(0), `${client.options.keyPrefix}:{m2}`))?.token);
        expect(t1).toBe((await holdAt(fleet.client(0), `${client.options.keyPrefix}:{m1}`))?.token);
        expect(signal.aborted).toBe(false);
        await client.getLock('m1').forceUnlock(); // this client's hold of m1 is marked lost at once
        expect(await eventually(() => signal.aborted, 2_000)).toBe(true);
        expect((signal.reason as LockLostError).reason).toBe('forced');
      },
      { leaseMs: 10_000 },
    );
    // The section was not exclusive to the end: the release says so.
    await expect(outcome).rejects.toBeInstanceOf(LockLostError);
    expect(await client.getLock('m2').isLocked()).toBe(false);
  });

  it('reenters per task like its members, and spans two clients', async () => {
    const one = pool.make(fleet.url(0));
    const two = pool.make(fleet.url(0));
    const multi = one.getMultiLock([one.getLock('p'), two.getFairLock('q')]);
    await one.task(async () => {
      await multi.lock({ leaseMs: 10_000 });
      await multi.lock({ leaseMs: 10_000 });
      expect(await multi.getHoldCount()).toBe(2);
      expect(await multi.isHeldByCurrentTask()).toBe(true);
      await multi.unlock();
      await multi.unlock();
      expect(await multi.isLocked()).toBe(false);
    });
  });

  it('refuses an empty list and a member that is not a lock, before any command', () => {
    const client = pool.make(fleet.url(0));
    expect(() => client.getMultiLock([])).toThrow(InvalidArgumentError);
    expect(() => client.getMultiLock([{} as never])).toThrow(InvalidArgumentError);
  });
});
