import { Redis } from 'ioredis';
import { RedisFleet } from '@org/rlock-testing';
import type { RLockClient } from '@org/rlock-core';
import { ClientPool, eventually } from './support.js';

/** Leases no renewal or expiry ends within a test: only a message could explain a change. */
const LEASE_MS = 30_000;

/** Tokens a forger may try: the largest a fenced resource would keep for good, and ones no script mints. */
const BAD_TOKENS = ['9007199254740991', '-1', 'not-a-number', '1e400'];

/** Messages no script publishes, on any channel; published last, they tell when the client has read every forgery before them. */
const GARBAGE = ['', ' ', 'garbage', '\u0000\u001b[2J', 'forced', 'forced a b', 'need:', ':', 'unlock unlock'];

/** One kind under test: a hold the holder keeps, a wait the waiter starts, and what Redis says about the hold. */
interface Case {
  readonly kind: string;
  /** Takes the hold: its signal (when the kind has one), how it is released, and its token in Redis terms. */
  readonly hold: (client: RLockClient, name: string) => Promise<{ signal?: AbortSignal; token?: string; release(): Promise<void> }>;
  /** Starts waiting: settles with the grant's token ('' where there is none) once granted. */
  readonly wait: (client: RLockClient, name: string) => Promise<{ token: string; release(): Promise<void> }>;
  /** What Redis holds now, for the before/after comparison: holders (owner and token) or the permits left. */
  readonly state: (client: RLockClient, name: string) => Promise<unknown>;
  /** Channels the waiter's client listens on once it waits: the object's, and its notice channel where it sends a hold's acquire. */
  readonly channels: number;
}

const holders = async (client: RLockClient, name: string): Promise<unknown> => {
  const info = await client.inspect(name);
  return info?.holders.map((holder) => `${holder.owner} ${holder.token ?? ''}`).sort();
};

const cases: Case[] = [
  {
    kind: 'lock',
    hold: (client, name) =>
      client
        .getLock(name)
        .acquire({ leaseMs: LEASE_MS })
        .then((h) => ({ signal: h.signal, token: h.token, release: () => h.unlock() })),
    wait: (client, name) =>
      client
        .getLock(name)
        .acquire({ leaseMs: LEASE_MS })
        .then((h) => ({ token: h.token, release: () => h.unlock() })),
    state: holders,
    channels: 2,
  },
  {
    kind: 'fair lock',
    hold: (client, name) =>
      client
        .getFairLock(name)
        .acquire({ leaseMs: LEASE_MS })
        .then((h) => ({ signal: h.signal, token: h.token, release: () => h.unlock() })),
    wait: (client, name) =>
      client
        .getFairLock(name)
        .acquire({ leaseMs: LEASE_MS })
        .then((h) => ({ token: h.token, release: () => h.unlock() })),
    state: holders,
    channels: 2,
  },
  {
    kind: 'read-write lock',
    hold: (client, name) =>
      client
        .getReadWriteLock(name)
        .readLock()
        .acquire({ leaseMs: LEASE_MS })
        .then((h) => ({ signal: h.signal, token: h.token, release: () => h.unlock() })),
    wait: (client, name) =>
      client
        .getReadWriteLock(name)
        .writeLock()
        .acquire({ leaseMs: LEASE_MS })
        .then((h) => ({ token: h.token, release: () => h.unlock() })),
    state: holders,
    channels: 2,
  },
  {
    kind: 'non-reentrant lock',
    hold: (client, name) =>
      client
        .getNonReentrantLock(name)
        .acquire({ leaseMs: LEASE_MS })
        .then((h) => ({ signal: h.signal, token: h.token, release: () => h.unlock() })),
    wait: (client, name) =>
      client
        .getNonReentrantLock(name)
        .acquire({ leaseMs: LEASE_MS })
        .then((h) => ({ token: h.token, release: () => h.unlock() })),
    state: holders,
    channels: 2,
  },
  {
    kind: 'semaphore',
    hold: async (client, name) => {
      const semaphore = client.getSemaphore(name);
      await semaphore.trySetPermits(1);
      await semaphore.acquire(1);
      return { release: () => semaphore.release(1) };
    },
    wait: (client, name) => {
      const semaphore = client.getSemaphore(name);
      return semaphore.acquire(1).then(() => ({ token: '', release: () => semaphore.release(1) }));
    },
    state: (client, name) => client.getSemaphore(name).availablePermits(),
    channels: 1,
  },
  {
    kind: 'permit semaphore',
    hold: async (client, name) => {
      const semaphore = client.getPermitExpirableSemaphore(name);
      await semaphore.trySetPermits(1);
      const permit = await semaphore.acquire({ leaseMs: LEASE_MS });
      return { signal: permit.signal, token: permit.token, release: () => permit.release() };
    },
    wait: (client, name) =>
      client
        .getPermitExpirableSemaphore(name)
        .acquire({ leaseMs: LEASE_MS })
        .then((permit) => ({ token: permit.token, release: () => permit.release() })),
    state: holders,
    channels: 2,
  },
];

/** Everything a reader of Redis can see under `prefix`: key names and the words in their values. */
async function visibleWords(reader: Redis, prefix: string): Promise<{ keys: string[]; words: Set<string> }> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await reader.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 100);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  const words = new Set<string>();
  const add = (text: string): void => text.split(/\s+/).forEach((word) => word !== '' && words.add(word));
  for (const key of keys) {
    const type = await reader.type(key);
    if (type === 'string') add((await reader.get(key)) ?? '');
    else if (type === 'hash') Object.entries(await reader.hgetall(key)).forEach(([field, value]) => (add(field), add(value)));
    else if (type === 'list') (await reader.lrange(key, 0, -1)).forEach((item) => add(item));
    else if (type === 'zset') ((await reader.call('ZRANGE', key, '0', '-1')) as string[]).forEach((member) => add(member));
  }
  return { keys, words };
}

/** Each queued owner's current ticket op, as a fair lock's tickets hash shows it ("<op> <leaseMs>"). */
async function tickets(reader: Redis, keys: readonly string[]): Promise<[owner: string, op: string][]> {
  const found: [string, string][] = [];
  for (const key of keys) {
    if ((await reader.type(key)) !== 'hash') continue;
    for (const [field, value] of Object.entries(await reader.hgetall(key))) {
      const op = /^(\S+) \d+$/.exec(value)?.[1];
      if (op !== undefined) found.push([field, op]);
    }
  }
  return found;
}

/** What a forger builds from what it can read: hand-offs, force notices and wakes for every owner, token and key it saw. */
function forgeries(keys: readonly string[], words: ReadonlySet<string>): string[] {
  const owners = [...words].filter((word) => /^[0-9A-Za-z_]{21}:\S+$/.test(word));
  const clientIds = [...new Set(owners.map((owner) => owner.slice(0, owner.indexOf(':'))))];
  // A hold record keeps its token in base 36; the notices carry it in decimal.
  const tokens = [...new Set([...words].filter((word) => /^[0-9a-z]+$/.test(word)).flatMap((word) => [word, String(parseInt(word, 36))])), ...BAD_TOKENS];
  const ops = [...words, ''];
  const messages = ['unlock', 'force', 'zero', '1:1', '9007199254740991:9007199254740991', '-1:5', '1e400:1', ...clientIds.map((id) => `need:${id}`)];
  for (const owner of owners) {
    for (const token of tokens) {
      for (const op of ops) messages.push(`${owner} ${token} ${op}`);
      for (const key of keys) messages.push(`forced ${owner} ${token} ${key}`);
    }
  }
  return messages;
}

describe('messages are hints: forged ones change no hold and give no grant', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();
  const connections: Redis[] = [];

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
    // What the forger may do: read every key and publish on every channel, nothing else.
    await fleet.client(0).call('ACL', 'SETUSER', 'forger', 'on', '>forger-pass', '~*', '&*', '+@read', '+publish', '+pubsub|channels', '+pubsub|shardchannels');
  });
  afterEach(async () => {
    connections.splice(0).forEach((connection) => connection.disconnect());
    await pool.closeAll();
  });
  afterAll(() => fleet.stop());

  /** Channels the connections of rlock client `clientId` are subscribed to, as CLIENT LIST counts them. */
  const subscriptionsOf = async (clientId: string): Promise<number> => {
    const list = (await fleet.client(0).call('CLIENT', 'LIST')) as string;
    let count = 0;
    for (const line of list.split('\n')) {
      if (!line.includes(`name=rlock:${clientId}:`)) continue;
      count += Number(/ sub=(\d+)/.exec(line)?.[1] ?? 0) + Number(/ ssub=(\d+)/.exec(line)?.[1] ?? 0);
    }
    return count;
  };

  it.each(cases)(
    '$kind: a holder holds and a waiter waits through every forgery on every channel it can see',
    async ({ hold, wait, state, channels: listened }) => {
      const holder = pool.make(fleet.url(0));
      const prefix = holder.options.keyPrefix;
      const waiter = pool.make(fleet.url(0), { keyPrefix: prefix });
      const forger = new Redis({ port: fleet.port(0), host: '127.0.0.1', username: 'forger', password: 'forger-pass' });
      connections.push(forger);
      const name = 'target';

      const held = await hold(holder, name);
      let waited: { token: string; release(): Promise<void> } | undefined;
      const waiting = wait(waiter, name).then((grant) => (waited = grant));
      const before = await state(holder, name);
      expect(await eventually(async () => (await subscriptionsOf(waiter.clientId)) === listened, 5_000)).toBe(true);
      // Every channel the clients listen on, as the forger can list them.
      const channels = [
        ...((await forger.call('PUBSUB', 'CHANNELS', `${prefix}:*`)) as string[]),
        ...((await forger.call('PUBSUB', 'SHARDCHANNELS', `${prefix}:*`)) as string[]),
      ];
      const { keys, words } = await visibleWords(forger, prefix);

      // A hand-off naming the waiter's current try (read again before each: a woken waiter's try changes it), then everything else.
      for (const token of BAD_TOKENS) {
        for (const channel of channels) {
          for (const [owner, op] of await tickets(forger, keys)) await forger.publish(channel, `${owner} ${token} ${op}`);
        }
      }
      for (const channel of channels) {
        for (const message of forgeries(keys, words)) await forger.publish(channel, message);
      }
      // Garbage last: once both clients counted it dropped, they have read every forgery before it (one connection, in order).
      let garbageHeard = 0;
      for (const channel of channels) {
        for (const message of GARBAGE) garbageHeard += await forger.publish(channel, message);
      }
      expect(garbageHeard).toBeGreaterThan(0);
      expect(await eventually(() => holder.messagesDropped + waiter.messagesDropped >= garbageHeard, 5_000)).toBe(true);

      // A round trip on each client's command connection: any check a forgery prompted has its answer.
      expect(await state(holder, name)).toEqual(before);
      expect(await state(waiter, name)).toEqual(before);
      expect(waited).toBeUndefined();
      expect(held.signal?.aborted ?? false).toBe(false);

      // The real release is what hands the object over, with Redis's token.
      await held.release();
      const grant = await waiting;
      if (grant.token !== '') expect((await holders(waiter, name)) as string[]).toEqual([expect.stringMatching(new RegExp(` ${grant.token}$`))]);
      expect(BAD_TOKENS).not.toContain(grant.token);
      await grant.release();
    },
  );
});
