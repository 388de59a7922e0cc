import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { RedisFleet, evalScript } from '@org/rlock-testing';
import { IllegalMonitorStateError } from '@org/rlock-core';
import { SCRIPTS, type EmbeddedScript } from '@org/rlock-core/internal';
import { ClientPool, commandCalls, uniquePrefix } from './support.js';

const COUNTER = fileURLToPath(new URL('./fixtures/counter-worker.mjs', import.meta.url));

describe('read-write lock', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  describe('scripts', () => {
    const run = <A>(script: EmbeddedScript<A>, args: NoInfer<A>) => evalScript(fleet.client(0), script, args) as Promise<unknown[]>;
    const keysOf = (prefix: string) => {
      const hash = `${prefix}:{doc}`;
      return {
        hash,
        fence: `${prefix}:{1}:fence`,
        cancelled: `${hash}:cancelled`,
        readers: `${hash}:readers`,
        writers: `${hash}:writers`,
        released: `${hash}:released`,
        channel: `${hash}:release`,
      };
    };
    const acquire = (k: ReturnType<typeof keysOf>, owner: string, mode: string, op: string, leaseMs = 10_000, join = '1') =>
      run(SCRIPTS.rwLockAcquire, {
        hash: k.hash,
        fence: k.fence,
        cancelled: k.cancelled,
        readers: k.readers,
        writers: k.writers,
        owner,
        leaseMs,
        op,
        mode,
        waiterLeaseMs: 5_000,
        join,
      });
    const release = (k: ReturnType<typeof keysOf>, owner: string, op: string, mode: string, token: string) =>
      run(SCRIPTS.rwLockRelease, {
        hash: k.hash,
        released: k.released,
        readers: k.readers,
        writers: k.writers,
        owner,
        op,
        mode,
        all: '0',
        token,
        replayWindowMs: 5_000,
        sharded: '0',
        channel: k.channel,
      });

    it('shares reads, each reader with its own token and lease, and refuses a writer meanwhile', async () => {
      const k = keysOf(uniquePrefix());
      const [, t1] = await acquire(k, 'a', 'read', 'o1');
      const [, t2] = await acquire(k, 'b', 'read', 'o2');
      expect(t1).not.toBe(t2);
      expect(await fleet.client(0).zcard(k.readers)).toBe(2);
      const refused = await acquire(k, 'w', 'write', 'o3');
      expect(refused[0]).toBe(0);
      // The refused writer waits, holding new readers of other owners back…
      expect((await acquire(k, 'c', 'read', 'o4'))[0]).toBe(0);
      // …but not one that reads already.
      expect(await acquire(k, 'a', 'read', 'o5')).toEqual([1, t1, 2]);
    });

    it("acquire refuses a hash without its mode (a lock's hold, also a hash) with WRONGTYPE, and writes nothing", async () => {
      const k = keysOf(uniquePrefix());
      const redis = fleet.client(0);
      await redis.hset(k.hash, { 'c:t1': '1', t: '17', o: 'a' });
      for (const mode of ['read', 'write']) await expect(acquire(k, 'd:t1', mode, `o-${mode}`)).rejects.toThrow(/WRONGTYPE/);
      expect(await redis.hgetall(k.hash)).toEqual({ 'c:t1': '1', t: '17', o: 'a' });
      expect(await redis.exists(k.fence, k.readers, k.writers, k.cancelled)).toBe(0);
    });

    it("forceUnlock releases every holder, announces 'force' and tells each holder on its client's notice channel", async () => {
      const prefix = uniquePrefix();
      const k = keysOf(prefix);
      const listener = fleet.client(0);
      const messages: [string, string][] = [];
      listener.on('message', (channel: string, message: string) => messages.push([channel, message]));
      await listener.subscribe(`${k.hash}:release`, `${prefix}:client:cA`, `${prefix}:client:cB`);
      const [, tA] = await acquire(k, 'cA:t1', 'read', 'o1');
      const [, tB] = await acquire(k, 'cB:t1', 'read', 'o2');
      const force = () =>
        run(SCRIPTS.rwLockForceUnlock, { hash: k.hash, readers: k.readers, sharded: '0', channel: `${k.hash}:release`, notices: `${prefix}:client:` });
      expect(await force()).toBe(1);
      expect(await fleet.client(0).exists(k.hash, k.readers)).toBe(0);
      const [, tW] = await acquire(k, 'cA:t2', 'write', 'o3');
      expect(await force()).toBe(1);
      expect(await force()).toBe(0);
      await listener.ping();
      expect(messages).toEqual([
        [`${k.hash}:release`, 'force'],
        [`${prefix}:client:cA`, `forced cA:t1 ${String(tA)} ${k.hash}`],
        [`${prefix}:client:cB`, `forced cB:t1 ${String(tB)} ${k.hash}`],
        [`${k.hash}:release`, 'force'],
        [`${prefix}:client:cA`, `forced cA:t2 ${String(tW)} ${k.hash}`],
      ]);
    });

    it('refuses at once the write lock to an owner that only reads', async () => {
      const k = keysOf(uniquePrefix());
      await acquire(k, 'a', 'read', 'o1');
      expect(await acquire(k, 'a', 'write', 'o2')).toEqual([-3]);
    });

    it('lets the writer read too (a downgrade), and frees the readers of a lapsed reader lease', async () => {
      const k = keysOf(uniquePrefix());
      const [, wt] = await acquire(k, 'w', 'write', 'o1');
      expect((await acquire(k, 'w', 'read', 'o2'))[0]).toBe(1);
      const released = await release(k, 'w', 'o3', 'write', wt as string);
      expect(released[0]).toBe(1);
      expect(await fleet.client(0).hget(k.hash, 'mode')).toBe('read');
      // A reader with a 50 ms lease that is never renewed: its share goes with its lease.
      const k2 = keysOf(uniquePrefix());
      await acquire(k2, 'r', 'read', 'x', 50);
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect((await acquire(k2, 'w', 'write', 'y'))[0]).toBe(1);
    });

    it('answers a replayed acquire and release with their first outcome', async () => {
      const k = keysOf(uniquePrefix());
      const first = await acquire(k, 'a', 'write', 'same');
      expect(await acquire(k, 'a', 'write', 'same')).toEqual(first);
      expect(await release(k, 'a', 'rel', 'write', '')).toEqual([1, 0, 0]);
      expect(await release(k, 'a', 'rel', 'write', '')).toEqual([1, 0, 0]);
    });
  });

  it('lets two tasks read at once and keeps the writer out until both are done', async () => {
    const client = pool.make(fleet.url(0));
    const other = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
    const rw = client.getReadWriteLock('doc');
    const a = await rw.readLock().acquire({ leaseMs: 10_000 });
    const b = await other.getReadWriteLock('doc').readLock().acquire({ leaseMs: 10_000 });
    expect(a.token).not.toBe(b.token);
    expect(await client.task(() => rw.writeLock().tryLock({ leaseMs: 5_000 }))).toBe(false);
    const writing = client.task(() =>
      rw
        .writeLock()
        .lock({ leaseMs: 5_000, waitMs: 10_000 })
        .then(() => rw.writeLock().unlock()),
    );
    await a.unlock();
    await b.unlock();
    await writing;
    expect(await rw.writeLock().isLocked()).toBe(false);
  });

  it('reenters per task in each mode, and lets the writer downgrade to a reader', async () => {
    const client = pool.make(fleet.url(0));
    const other = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
    const rw = client.getReadWriteLock('downgrade');
    let downgraded!: () => void;
    const ready = new Promise<void>((resolve) => (downgraded = resolve));
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const holder = client.task(async () => {
      await rw.writeLock().lock({ leaseMs: 10_000 });
      await rw.writeLock().lock({ leaseMs: 10_000 });
      expect(await rw.writeLock().getHoldCount()).toBe(2);
      await rw.readLock().lock({ leaseMs: 10_000 });
      await rw.writeLock().unlock();
      await rw.writeLock().unlock();
      expect(await rw.readLock().isHeldByCurrentTask()).toBe(true);
      downgraded();
      await done;
      await rw.readLock().unlock();
    });
    await ready;
    // Downgraded: other tasks may read now, nobody may write.
    const theirs = other.getReadWriteLock('downgrade');
    const read = await theirs.readLock().acquire({ leaseMs: 1_000 });
    expect(await other.task(() => theirs.writeLock().tryLock({ leaseMs: 1_000 }))).toBe(false);
    await read.unlock();
    finish();
    await holder;
    expect(await rw.readLock().isLocked()).toBe(false);
  });

  it('refuses the write lock to a task holding only the read lock at once, before any command', async () => {
    const client = pool.make(fleet.url(0));
    const rw = client.getReadWriteLock('upgrade');
    await client.task(async () => {
      await rw.readLock().lock({ leaseMs: 10_000 });
      const before = await commandCalls(fleet.client(0), 'evalsha');
      await expect(rw.writeLock().lock({ leaseMs: 1_000 })).rejects.toBeInstanceOf(IllegalMonitorStateError);
      expect(await commandCalls(fleet.client(0), 'evalsha')).toBe(before);
      await rw.readLock().unlock();
    });
  });

  it('serves a writer while readers keep arriving', async () => {
    const readers = pool.make(fleet.url(0));
    const writer = pool.make(fleet.url(0), { keyPrefix: readers.options.keyPrefix });
    const rw = readers.getReadWriteLock('stream');
    let stop = false;
    let reads = 0;
    // Four tasks read in overlapping turns without a pause between them.
    const streams = Array.from({ length: 4 }, () =>
      readers.task(async () => {
        while (!stop) {
          await rw.readLock().lock({ leaseMs: 10_000, waitMs: 20_000 });
          reads++;
          await new Promise((resolve) => setTimeout(resolve, 5));
          await rw.readLock().unlock();
        }
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    await writer.task(async () => {
      await writer.getReadWriteLock('stream').writeLock().lock({ leaseMs: 5_000, waitMs: 10_000 });
      await writer.getReadWriteLock('stream').writeLock().unlock();
    });
    const waited = performance.now() - started;
    stop = true;
    await Promise.all(streams);
    expect(reads).toBeGreaterThan(4);
    // Held back new readers: the writer got in within the readers' own turns, far below its 10 s wait.
    expect(waited).toBeLessThan(2_000);
  });

  it('never lets writers of 4 processes overlap', async () => {
    const prefix = uniquePrefix();
    await Promise.all(
      [1, 2, 3, 4].map(
        (worker) =>
          new Promise<void>((resolve, reject) => {
            const child = spawn(process.execPath, [COUNTER], {
              env: { ...process.env, REDIS_URL: fleet.url(0), PREFIX: prefix, TASKS: '4', ROUNDS: '20', WORKER: String(worker), KIND: 'rw' },
            });
            let stderr = '';
            child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
            child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`worker exited with ${code}: ${stderr}`))));
          }),
      ),
    );
    const redis = fleet.client(0);
    expect(Number(await redis.get(`${prefix}:data:counter`))).toBe(4 * 4 * 20);
    expect(Number((await redis.get(`${prefix}:data:overlaps`)) ?? 0)).toBe(0);
  });
});
