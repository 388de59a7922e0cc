import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, createRedlock, LockAcquireTimeoutError, LockLostError, type RLockClient } from '@org/rlock';
import { eventually, RedisCluster, RedisFleet, uniquePrefix } from '@org/rlock-testing';
import { Redis } from 'ioredis';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const BIN = join(root, 'packages/rlock', (JSON.parse(readFileSync(join(root, 'packages/rlock/package.json'), 'utf8')) as { bin: { rlock: string } }).bin.rlock);

/** The ACL users docs/security.md documents, by name: the `user <name> <rules…>` lines of its ```acl blocks. */
function documentedUsers(): Map<string, string[]> {
  const guide = readFileSync(join(root, 'docs/security.md'), 'utf8');
  const users = new Map<string, string[]>();
  for (const [, block] of guide.matchAll(/^```acl\n([\s\S]*?)^```/gm)) {
    for (const line of (block as string).split('\n')) {
      const [keyword, name, ...rules] = line.trim().split(/\s+/);
      if (keyword === 'user' && name !== undefined) users.set(name, rules);
    }
  }
  return users;
}

/** What the guide says to add to the library user on a Cluster (its deployments table's `Cluster` row). */
function documentedClusterRules(): string[] {
  const guide = readFileSync(join(root, 'docs/security.md'), 'utf8');
  const row = /^\| Cluster \| `([^`]+)`/m.exec(guide);
  return row ? (row[1] as string).replace(/\\\|/g, '|').split(/\s+/) : [];
}

/** `rules` for this test: its key prefix for the default one, its password for the documented placeholder. */
function adapt(rules: readonly string[], prefix: string, password: string): string[] {
  return rules.map((rule) => (rule.startsWith('>') ? `>${password}` : rule.replace(/^([~&]|%R~)rlock:\*$/, `$1${prefix}:*`)));
}

/** What the ACL refused `user` on a server (command, key or channel), from ACL LOG. */
async function refusals(admin: Redis, user: string): Promise<string[]> {
  const log = (await admin.call('ACL', 'LOG', '1000')) as unknown[][];
  const refused: string[] = [];
  for (const entry of log) {
    const fields = new Map<string, unknown>();
    for (let i = 0; i + 1 < entry.length; i += 2) fields.set(String(entry[i]), entry[i + 1]);
    if (fields.get('username') === user) refused.push(`${String(fields.get('reason'))} ${String(fields.get('object'))} (${String(fields.get('context'))})`);
  }
  return [...new Set(refused)].sort();
}

/** Runs the built CLI to its end with stdin closed. */
function rlock(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('RLOCK_')));
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

describe('the least-privilege ACL users of docs/security.md', () => {
  const users = documentedUsers();
  const appRules = users.get('rlock-app');
  const cliRules = users.get('rlock-cli');
  let fleet: RedisFleet;
  let prefix: string;
  let scratch: string;
  const clients: { close(): Promise<unknown> }[] = [];
  const url = (index: number, user: string): string => `redis://${user}:${user}-pw@127.0.0.1:${fleet.port(index)}`;

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 3 });
    scratch = mkdtempSync(join(tmpdir(), 'rlock-acl-'));
  });
  beforeEach(async () => {
    prefix = uniquePrefix();
    for (let index = 0; index < 3; index++) {
      const admin = fleet.client(index);
      await admin.call('ACL', 'LOG', 'RESET');
      for (const [name, rules] of users) await admin.call('ACL', 'SETUSER', name, 'reset', ...adapt(rules, prefix, `${name}-pw`));
    }
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(async () => {
    rmSync(scratch, { recursive: true, force: true });
    await fleet.stop();
  });

  it('documents a library user and a CLI user, each limited to the prefix', () => {
    expect(appRules).toEqual(expect.arrayContaining(['on', 'resetkeys', '~rlock:*', 'resetchannels', '&rlock:*', '-@all']));
    expect(cliRules).toEqual(expect.arrayContaining(['on', 'resetkeys', '~rlock:*', 'resetchannels', '-@all']));
    // The CLI user may publish nowhere and write nothing.
    expect(cliRules?.filter((rule) => rule.startsWith('&') || /^\+(set|del|publish|hset|zadd|@write|@all)$/.test(rule))).toEqual([]);
  });

  it('runs every kind under the library user: waits, wakes, hand-offs, force-unlock, inspect, list, leader election and Redlock', async () => {
    const make = (): RLockClient => {
      const client = createClient({ redis: url(0, 'rlock-app'), keyPrefix: prefix, watchdogTimeoutMs: 3_000 });
      client.on('error', () => undefined);
      clients.push(client);
      return client;
    };
    const a = make();
    const b = make();
    /**
     * Resolves once `waiting` waits on a channel of object `name` (so the release that follows wakes it through pub/sub), or rejects
     * with its error: a command the ACL refused names itself there.
     */
    const subscribed = async (name: string, waiting: Promise<unknown>): Promise<void> => {
      const admin = fleet.client(0);
      let failure: { error: unknown } | undefined;
      waiting.catch((error: unknown) => (failure = { error }));
      const channels = async (): Promise<number> => ((await admin.call('PUBSUB', 'CHANNELS', `${prefix}:{${name}}*`)) as string[]).length;
      expect(await eventually(async () => failure !== undefined || (await channels()) > 0, 10_000)).toBe(true);
      if (failure) throw failure.error;
    };

    // Locks of every kind: A holds, B waits on pub/sub, A's release wakes B.
    for (const [name, lockOf] of [
      ['order', (client: RLockClient) => client.getLock('order')],
      ['payout', (client: RLockClient) => client.getFairLock('payout')],
      ['job', (client: RLockClient) => client.getNonReentrantLock('job')],
      ['doc', (client: RLockClient) => client.getReadWriteLock('doc').writeLock()],
    ] as const) {
      const held = await lockOf(a).acquire();
      const waiting = lockOf(b).acquire({ waitMs: 10_000 });
      await subscribed(name, waiting);
      expect((await a.inspect(name))?.holderCount).toBe(1);
      await held.unlock();
      await (await waiting).unlock();
    }
    const reading = await a.getReadWriteLock('doc').readLock().acquire();
    await (await b.getReadWriteLock('doc').readLock().acquire({ waitMs: 0 })).unlock();
    await reading.unlock();

    // A semaphore: B waits for A's permit.
    const semaphore = a.getSemaphore('quota');
    expect(await semaphore.trySetPermits(1)).toBe(true);
    await semaphore.acquire();
    const permit = b.getSemaphore('quota').acquire(1, { waitMs: 10_000 });
    await subscribed('quota', permit);
    await semaphore.release();
    await permit;
    await semaphore.addPermits(2);
    expect(await semaphore.availablePermits()).toBe(2);
    expect(await semaphore.drainPermits()).toBe(2);

    // A permit-expirable semaphore: B waits for A's permit; release(id) from elsewhere.
    const gpus = a.getPermitExpirableSemaphore('gpu');
    expect(await gpus.trySetPermits(1)).toBe(true);
    const gpu = await gpus.acquire();
    const next = b.getPermitExpirableSemaphore('gpu').acquire({ waitMs: 10_000 });
    await subscribed('gpu', next);
    await gpu.release();
    const second = await next;
    await gpus.release(second.id);
    expect(await gpus.availablePermits()).toBe(1);

    // A latch opens its waiter.
    const latch = a.getCountDownLatch('batch');
    expect(await latch.trySetCount(1)).toBe(true);
    const opened = b.getCountDownLatch('batch').await({ waitMs: 10_000 });
    await subscribed('batch', opened);
    await latch.countDown();
    expect(await opened).toBe(true);

    // Force-unlock tells the holder; a timed-out waiter names the holder's client (CLIENT LIST).
    const forced = await a.getLock('stuck').acquire({ leaseMs: 60_000 });
    const timeout = await b
      .getLock('stuck')
      .acquire({ waitMs: 100 })
      .catch((error: unknown) => error);
    expect(timeout).toBeInstanceOf(LockAcquireTimeoutError);
    expect((timeout as LockAcquireTimeoutError).holder?.client?.pid).toBe(process.pid);
    expect(await b.getLock('stuck').forceUnlock()).toBe(true);
    await expect(forced.unlock()).rejects.toBeInstanceOf(LockLostError);

    // A multi-lock, a leader election, and list() (SCAN).
    await a.getMultiLock([a.getLock('m1'), a.getFairLock('m2')]).withLock(() => undefined);
    const leader = await a.getLeaderElection('scheduler').elect();
    expect(leader.epoch).toBeDefined();
    await leader.resign();
    const listed: string[] = [];
    for await (const page of a.list({ match: '*' })) listed.push(...page.map((info) => info.name));
    expect(listed).toEqual(expect.arrayContaining(['quota', 'gpu']));

    // Redlock across the three masters.
    const redlock = createRedlock({ masters: [0, 1, 2].map((index) => url(index, 'rlock-app')), keyPrefix: prefix, watchdogTimeoutMs: 3_000 });
    redlock.on('error', () => undefined);
    clients.push(redlock);
    await redlock.getLock('report').withLock(async () => {
      expect(await redlock.getLock('report').isLocked()).toBe(true);
    });

    // Nothing was refused but the eviction check's CONFIG GET, whose answer comes from INFO instead.
    for (let index = 0; index < 3; index++) {
      expect((await refusals(fleet.client(index), 'rlock-app')).filter((refusal) => refusal !== 'command config|get (toplevel)')).toEqual([]);
    }
  });

  it("runs the CLI's reads under the CLI user, and refuses its writes without changing anything", async () => {
    const owner = createClient({ redis: fleet.url(0), keyPrefix: prefix });
    owner.on('error', () => undefined);
    clients.push(owner);
    await owner.getLock('order').acquire({ leaseMs: 60_000 });
    await owner.getFairLock('payout').acquire({ leaseMs: 60_000 });
    await owner.getReadWriteLock('doc').readLock().acquire({ leaseMs: 60_000 });
    await owner.getNonReentrantLock('job').acquire({ leaseMs: 60_000 });
    await owner.getSemaphore('quota').trySetPermits(2);
    await owner.getPermitExpirableSemaphore('gpu').trySetPermits(2);
    const gpu = await owner.getPermitExpirableSemaphore('gpu').acquire({ leaseMs: 60_000 });
    await owner.getCountDownLatch('batch').trySetCount(2);
    // Waiters, so the reads cover the fair lock's queue and the read-write lock's waiting writer.
    const other = createClient({ redis: fleet.url(0), keyPrefix: prefix });
    other.on('error', () => undefined);
    clients.push(other);
    const waiters = [other.getFairLock('payout').acquire({ waitMs: 60_000 }), other.getReadWriteLock('doc').writeLock().acquire({ waitMs: 60_000 })];
    for (const waiter of waiters) waiter.catch(() => undefined); // ended by close()
    const queued = async (): Promise<boolean> => {
      const info = await owner.inspect('payout');
      return info?.kind === 'fairLock' && info.waiterCount === 1;
    };
    expect(await eventually(queued, 10_000)).toBe(true);

    const file = join(scratch, `${prefix}.url`);
    writeFileSync(file, url(0, 'rlock-cli'), { mode: 0o600 });
    const flags = ['--redis-file', file, '--prefix', prefix];
    const listed = await rlock(['ls', '--json', ...flags]);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { name: string }[]).map((info) => info.name).sort()).toEqual([
      'batch',
      'doc',
      'gpu',
      'job',
      'order',
      'payout',
      'quota',
    ]);
    for (const [name, kind] of [
      ['order', 'lock'],
      ['payout', 'fairLock'],
      ['doc', 'readWriteLock'],
      ['job', 'nonReentrantLock'],
      ['quota', 'semaphore'],
      ['gpu', 'permitExpirableSemaphore'],
      ['batch', 'countDownLatch'],
    ] as const) {
      const shown = await rlock(['show', name, '--kind', kind, '--json', ...flags]);
      expect({ name, code: shown.code, stderr: shown.stderr }).toEqual({ name, code: 0, stderr: '' });
      expect(JSON.parse(shown.stdout)).toMatchObject({ name, kind });
    }
    const watched = await rlock(['watch', 'order', '--count', '2', '--interval', '10', ...flags]);
    expect(watched.code).toBe(0);
    expect((await rlock(['ls', ...flags])).code).toBe(0);
    expect(await refusals(fleet.client(0), 'rlock-cli')).toEqual(['command config|get (toplevel)']);

    // Its writes are refused by Redis and change nothing.
    const unlock = await rlock(['unlock', 'order', '--yes', ...flags]);
    expect(unlock.code).toBe(4);
    expect(await owner.getLock('order').isLocked()).toBe(true);
    const release = await rlock(['release', 'gpu', gpu.id, '--yes', ...flags]);
    expect(release.code).toBe(4);
    expect(await owner.getPermitExpirableSemaphore('gpu').availablePermits()).toBe(1);
    // The library user may.
    writeFileSync(file, url(0, 'rlock-app'));
    expect((await rlock(['unlock', 'order', '--yes', ...flags])).code).toBe(0);
    expect(await owner.getLock('order').isLocked()).toBe(false);
  });

  describe('on a Cluster', () => {
    let cluster: RedisCluster;
    beforeAll(async () => {
      cluster = await RedisCluster.start({ masters: 3, replicasPerMaster: 0 });
    });
    afterAll(() => cluster.stop());

    it('runs locks, a semaphore, a latch and list() under the library user with the Cluster additions', async () => {
      const extra = documentedClusterRules();
      expect(extra).toEqual(expect.arrayContaining(['+cluster|slots', '+spublish', '+ssubscribe']));
      const rules = [...adapt(appRules ?? [], prefix, 'rlock-app-pw'), ...extra];
      const admins = cluster.masters().map(({ host, port }) => new Redis({ host, port }));
      try {
        for (const admin of admins) {
          await admin.call('ACL', 'LOG', 'RESET');
          await admin.call('ACL', 'SETUSER', 'rlock-app', 'reset', ...rules);
        }
        const make = (): RLockClient => {
          const client = createClient({
            redis: {
              cluster: cluster.startupNodes.map(({ host, port }) => `redis://${host}:${port}`),
              redisOptions: { username: 'rlock-app', password: 'rlock-app-pw' },
            },
            keyPrefix: prefix,
            watchdogTimeoutMs: 3_000,
          });
          client.on('error', () => undefined);
          clients.push(client);
          return client;
        };
        const a = make();
        const b = make();
        for (const name of ['c1', 'c2', 'c3', 'c4']) {
          const held = await a.getFairLock(name).acquire();
          const waiting = b.getFairLock(name).acquire({ waitMs: 10_000 });
          expect(await eventually(async () => (await a.inspect(name))?.kind === 'fairLock', 10_000)).toBe(true);
          await held.unlock();
          await (await waiting).unlock();
          await (await a.getLock(name).acquire()).unlock();
        }
        const semaphore = a.getSemaphore('quota');
        expect(await semaphore.trySetPermits(1)).toBe(true);
        await semaphore.acquire();
        const permit = b.getSemaphore('quota').acquire(1, { waitMs: 10_000 });
        await semaphore.release();
        await permit;
        const latch = a.getCountDownLatch('batch');
        expect(await latch.trySetCount(1)).toBe(true);
        const opened = b.getCountDownLatch('batch').await({ waitMs: 10_000 });
        await latch.countDown();
        expect(await opened).toBe(true);
        await a.getLock('listed').acquire({ leaseMs: 60_000 });
        const listed: string[] = [];
        for await (const page of a.list({ match: 'listed' })) listed.push(...page.map((info) => info.name));
        expect(listed).toEqual(['listed']);
        for (const admin of admins) {
          expect((await refusals(admin, 'rlock-app')).filter((refusal) => refusal !== 'command config|get (toplevel)')).toEqual([]);
        }
      } finally {
        for (const admin of admins) admin.disconnect();
      }
    });
  });
});
