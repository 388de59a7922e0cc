import { jest } from '@jest/globals';
import { eventually, RedisCluster, RedisFleet, uniquePrefix } from '@org/rlock-testing';
import { createClient, createRedlock, type ClientWarning, type RedlockClient, type RLockClient } from '@org/rlock';
import { Redis, type RedisOptions } from 'ioredis';

/** What a client and the process were warned of: `warning` events, and RLOCK_EVICTION_POLICY process warnings (kept off stderr). */
function watchWarnings(client: RLockClient | RedlockClient): { events: ClientWarning[]; warnings: string[] } {
  const events: ClientWarning[] = [];
  const warnings: string[] = [];
  client.on('warning', (warning) => events.push(warning));
  jest.spyOn(process, 'emitWarning').mockImplementation((message: string | Error, options?: unknown) => {
    if ((options as { code?: unknown } | undefined)?.code === 'RLOCK_EVICTION_POLICY') warnings.push(String(message));
  });
  return { events, warnings };
}

/** CONFIG GET calls the server counted (`cmdstat_config|get` on Redis 7, `cmdstat_config` before). */
async function configGets(probe: Redis): Promise<number> {
  const stats = await probe.info('commandstats');
  return Number(/^cmdstat_config(?:\|get)?:calls=(\d+)/m.exec(stats)?.[1] ?? 0);
}

/**
 * Settles once a client's read of the eviction settings has been answered and handled: Redis counted a CONFIG GET (more than
 * `before`), a PING on the same connection came back after its reply, and the microtasks its reply started have run.
 */
async function checked(probe: Redis, before: number, connection: Redis): Promise<void> {
  expect(await eventually(async () => (await configGets(probe)) > before, 10_000)).toBe(true);
  await connection.ping();
  await new Promise((resolve) => setImmediate(resolve));
}

describe('the eviction policy check on connect', () => {
  const clients: (RLockClient | RedlockClient)[] = [];
  const make = (redis: string | RedisOptions): RLockClient => {
    const client = createClient({ redis, keyPrefix: uniquePrefix() });
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  };
  afterEach(async () => {
    jest.restoreAllMocks();
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });

  describe('on a server started with --maxmemory-policy allkeys-lru', () => {
    let fleet: RedisFleet;
    beforeAll(async () => {
      fleet = await RedisFleet.start({ size: 1, extraArgs: ['--maxmemory-policy', 'allkeys-lru'] });
    });
    afterAll(() => fleet.stop());

    it('warns once per client, by process warning and event, naming the server, the policy and the fix; a reconnect asks no more', async () => {
      const client = make(fleet.url(0));
      const { events, warnings } = watchWarnings(client);
      expect(await eventually(() => events.length > 0, 10_000)).toBe(true);
      const server = `127.0.0.1:${fleet.port(0)}`;
      expect(events).toEqual([{ code: 'RLOCK_EVICTION_POLICY', server, policy: 'allkeys-lru', maxmemoryBytes: 0, message: warnings[0] }]);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`Redis at ${server} runs maxmemory-policy allkeys-lru`);
      expect(warnings[0]).toContain('Only noeviction is safe');

      // Ready again after a reconnect: the server answered already, so nothing is asked or said again.
      const probe = fleet.client(0);
      const configCalls = await configGets(probe);
      expect(configCalls).toBeGreaterThan(0);
      const ready = new Promise((resolve) => client.redis.once('ready', resolve));
      (client.redis as Redis).disconnect(true);
      await ready;
      await (client.redis as Redis).ping();
      await new Promise((resolve) => setImmediate(resolve));
      expect(await configGets(probe)).toBe(configCalls);
      expect(events).toHaveLength(1);
      expect(warnings).toHaveLength(1);

      // Each client warns once: a second one says it again.
      const second = make(fleet.url(0));
      const secondEvents: ClientWarning[] = [];
      second.on('warning', (warning) => secondEvents.push(warning));
      expect(await eventually(() => secondEvents.length === 1, 10_000)).toBe(true);
      expect(warnings).toHaveLength(2);
    });

    it('reads the policy from INFO where CONFIG is refused (an ACL user without +config), and says nothing where INFO is refused too', async () => {
      const probe = fleet.client(0);
      const user = `evict-${uniquePrefix()}`;
      await probe.call('ACL', 'SETUSER', user, 'on', '>pw', '~*', '&*', '+@all', '-config');
      await probe.call('ACL', 'SETUSER', `${user}-blind`, 'on', '>pw', '~*', '&*', '+@all', '-config', '-info');
      try {
        const viaInfo = make(`redis://${user}:pw@127.0.0.1:${fleet.port(0)}`);
        const { events } = watchWarnings(viaInfo);
        expect(await eventually(() => events.length > 0, 10_000)).toBe(true);
        expect(events[0]).toMatchObject({ code: 'RLOCK_EVICTION_POLICY', policy: 'allkeys-lru' });

        jest.restoreAllMocks();
        // ioredis's ready check is INFO too: off, or it warns on the console that INFO was refused.
        const blind = make({ host: '127.0.0.1', port: fleet.port(0), username: `${user}-blind`, password: 'pw', enableReadyCheck: false });
        const { events: blindEvents, warnings } = watchWarnings(blind);
        // Both reads refused (ACL LOG has the INFO), answered and handled: not a word.
        expect(await eventually(async () => JSON.stringify(await probe.call('ACL', 'LOG')).includes(`${user}-blind`), 10_000)).toBe(true);
        await (blind.redis as Redis).ping();
        await new Promise((resolve) => setImmediate(resolve));
        expect(blindEvents).toEqual([]);
        expect(warnings).toEqual([]);
      } finally {
        await probe.call('ACL', 'DELUSER', user, `${user}-blind`);
      }
    });
  });

  describe('on servers started with the default noeviction', () => {
    let fleet: RedisFleet;
    beforeAll(async () => {
      fleet = await RedisFleet.start({ size: 3 });
    });
    afterAll(() => fleet.stop());

    it('says nothing about noeviction', async () => {
      const probe = fleet.client(0);
      const before = await configGets(probe);
      const client = make(fleet.url(0));
      const { events, warnings } = watchWarnings(client);
      await checked(probe, before, client.redis as Redis);
      expect(events).toEqual([]);
      expect(warnings).toEqual([]);
    });

    it('warns of a volatile-* policy with a limit: every lock key has a TTL', async () => {
      const probe = fleet.client(1);
      await probe.config('SET', 'maxmemory-policy', 'volatile-lru');
      await probe.config('SET', 'maxmemory', '512mb');
      try {
        const client = make(fleet.url(1));
        const { events, warnings } = watchWarnings(client);
        expect(await eventually(() => events.length > 0, 10_000)).toBe(true);
        expect(events[0]).toMatchObject({ policy: 'volatile-lru', maxmemoryBytes: 512 * 1024 * 1024 });
        expect(warnings[0]).toContain('volatile-* policies evict keys with a TTL, and every lock key and lease has one');
      } finally {
        await probe.config('SET', 'maxmemory-policy', 'noeviction');
        await probe.config('SET', 'maxmemory', '0');
      }
    });

    it('warns once for a Redlock client, naming the master whose policy can evict', async () => {
      const probe = fleet.client(2);
      await probe.config('SET', 'maxmemory-policy', 'allkeys-random');
      try {
        const redlock = createRedlock({ masters: [0, 1, 2].map((index) => fleet.url(index)), keyPrefix: uniquePrefix() });
        redlock.on('error', () => undefined);
        clients.push(redlock);
        const { events, warnings } = watchWarnings(redlock);
        expect(await eventually(() => events.length > 0, 10_000)).toBe(true);
        expect(events).toEqual([expect.objectContaining({ server: `127.0.0.1:${fleet.port(2)}`, policy: 'allkeys-random' })]);
        expect(warnings).toHaveLength(1);
      } finally {
        await probe.config('SET', 'maxmemory-policy', 'noeviction');
      }
    });
  });

  describe('on a Cluster', () => {
    let cluster: RedisCluster;
    beforeAll(async () => {
      cluster = await RedisCluster.start({ masters: 3, replicasPerMaster: 0 });
    });
    afterAll(() => cluster.stop());

    it("reads every master's policy and names the one that can evict", async () => {
      const last = cluster.masters()[2] as { host: string; port: number };
      const node = new Redis({ host: last.host, port: last.port });
      try {
        await node.config('SET', 'maxmemory-policy', 'allkeys-lfu');
        const client = createClient({ redis: { cluster: cluster.startupNodes.map(({ host, port }) => `redis://${host}:${port}`) }, keyPrefix: uniquePrefix() });
        client.on('error', () => undefined);
        clients.push(client);
        const { events } = watchWarnings(client);
        expect(await eventually(() => events.length > 0, 10_000)).toBe(true);
        expect(events).toEqual([expect.objectContaining({ server: `${last.host}:${last.port}`, policy: 'allkeys-lfu' })]);
      } finally {
        await node.config('SET', 'maxmemory-policy', 'noeviction');
        node.disconnect();
      }
    });
  });
});
