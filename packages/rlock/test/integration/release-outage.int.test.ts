import { createClient, LockLostError, RedisUnavailableError, type LockLostEvent, type LockReleasedEvent, type RLockClient } from '@org/rlock';
import { RedisFleet, eventually, takeHoldLeakWarnings, uniquePrefix } from '@org/rlock-testing';

/**
 * A release the caller asked for ends renewal at once whatever its outcome,
 * and the client finishes it in the background: a lock whose release could not
 * reach Redis is never kept alive by the watchdog.
 */
describe('a release while Redis is down', () => {
  let fleet: RedisFleet;
  const clients: RLockClient[] = [];

  beforeAll(async () => {
    // Every write reaches the AOF before it is acknowledged: the restarted
    // server has the hold exactly as it was.
    fleet = await RedisFleet.start({ size: 1, appendonly: true, appendfsync: 'always' });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(() => fleet.stop());

  it('rejects withLock, gives the hold up, and frees the lock once Redis is back, long before its lease', async () => {
    const keyPrefix = uniquePrefix();
    // A 20 s watchdog lease: had the hold been kept (or renewed), the key would
    // outlive the whole test.
    const worker = createClient({ redis: fleet.url(0), keyPrefix, watchdogTimeoutMs: 20_000, commandTimeoutMs: 500 });
    const other = createClient({ redis: fleet.url(0), keyPrefix, watchdogTimeoutMs: 20_000, commandTimeoutMs: 500 });
    clients.push(worker, other);
    const lost: LockLostEvent[] = [];
    const released: LockReleasedEvent[] = [];
    worker.on('lockLost', (event) => lost.push(event));
    worker.on('lockReleased', (event) => released.push(event));
    worker.on('error', () => undefined);
    other.on('error', () => undefined);

    let signal: AbortSignal | undefined;
    const outcome = await worker
      .getLock('job')
      .withLock(async (scope) => {
        signal = scope.signal;
        await fleet.kill(0);
      })
      .catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(RedisUnavailableError);
    // Given up at once: the holder is told, and the watchdog no longer has it.
    expect(signal?.aborted).toBe(true);
    expect((signal?.reason as LockLostError).reason).toBe('unreachable');
    expect(lost.map((event) => event.reason)).toEqual(['unreachable']);

    await fleet.restart(0);
    const key = `${keyPrefix}:{job}`;
    // The hold came back with the AOF; the client's background release removes it.
    expect(await eventually(async () => (await fleet.client(0).exists(key)) === 0, 8_000)).toBe(true);
    expect(await eventually(async () => released.length === 1, 2_000)).toBe(true);
    expect(released[0]).toMatchObject({ name: 'job', via: 'retry' });
    // Another worker gets the lock now, not after the 20 s lease (once its own connection, refused while
    // the server was down, has reconnected: until then its calls fail at once).
    const free = () =>
      other
        .task(() => other.getLock('job').tryLock({ leaseMs: 1_000 }))
        .catch((error: unknown) => (error instanceof RedisUnavailableError ? false : Promise.reject(error)));
    expect(await eventually(free, 5_000)).toBe(true);
    expect(takeHoldLeakWarnings().map(({ name }) => name)).toEqual(['job']);
  });

  it('finishes a release that timed out on a frozen server, and says so', async () => {
    const keyPrefix = uniquePrefix();
    const worker = createClient({ redis: fleet.url(0), keyPrefix, watchdogTimeoutMs: 3_000, commandTimeoutMs: 300 });
    clients.push(worker);
    worker.on('error', () => undefined);
    const released: LockReleasedEvent[] = [];
    worker.on('lockReleased', (event) => released.push(event));
    const handle = await worker.getLock('renewal').acquire();
    await fleet.pause(0);
    await expect(handle.unlock()).rejects.toBeInstanceOf(RedisUnavailableError);
    await fleet.resume(0);
    // The paused server ran the release when it woke: nothing is left.
    expect(await eventually(async () => (await fleet.client(0).exists(`${keyPrefix}:{renewal}`)) === 0, 3_000)).toBe(true);
    expect(await eventually(async () => released.length === 1, 3_000)).toBe(true);
    expect(released[0]).toMatchObject({ name: 'renewal', via: 'retry' });
  });
});
