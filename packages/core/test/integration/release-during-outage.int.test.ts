import { RedisFleet, takeHoldLeakWarnings } from '@org/rlock-testing';
import type { LockReleasedEvent } from '@org/rlock-core';
import { ClientPool, eventually, tick, uniquePrefix } from './support.js';

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

  // Workers take a lock in turn, each try and release fsynced to the AOF, when Redis is killed and restarted.
  // A try whose reply the crash cut off may have been granted and kept by the AOF: its undo, sent while the
  // connection was known down, has to reach Redis once it is back, or nobody gets the lock for the grant's lease.
  it('undoes an acquire whose answer the crash cut off, so workers go on once Redis is back', async () => {
    const rounds = Number(process.env.RLOCK_OUTAGE_ROUNDS ?? 3);
    const outcomes: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const keyPrefix = uniquePrefix();
      // commandTimeoutMs 1 s (a third of the watchdog lease): the outage below outlasts it.
      const workers = Array.from({ length: 3 }, () => pool.make(fleet.url(0), { keyPrefix, watchdogTimeoutMs: 3_000 }));
      for (const worker of workers) worker.on('error', () => undefined);
      let entries = 0;
      let stop = false;
      const loops = workers.flatMap((worker) =>
        Array.from({ length: 3 }, async () => {
          const lock = worker.getLock('job');
          while (!stop) {
            try {
              // A grant left behind holds 20 s: far past the bounds below.
              await worker.task(() =>
                lock.withLock(
                  async () => {
                    entries++;
                    await tick();
                  },
                  { leaseMs: 20_000, waitMs: 4_000 },
                ),
              );
            } catch {
              await new Promise((resolve) => setTimeout(resolve, 20));
            }
          }
        }),
      );
      expect(await eventually(() => entries >= 30, 10_000)).toBe(true);
      await fleet.kill(0);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await fleet.restart(0);
      const back = entries;
      const progressed = await eventually(() => entries >= back + 30, 8_000);
      stop = true;
      await Promise.all(loops);
      const freed = await eventually(async () => (await fleet.client(0).exists(`${keyPrefix}:{job}`)) === 0, 3_000);
      outcomes.push(progressed && freed ? 'ok' : `stuck (${await fleet.client(0).pttl(`${keyPrefix}:{job}`)} ms of lease left)`);
      await pool.closeAll();
    }
    process.stdout.write(`crash during hand-offs, ${rounds} rounds: ${outcomes.join(', ')}\n`);
    expect(outcomes).toEqual(outcomes.map(() => 'ok'));
  }, 120_000);
});
