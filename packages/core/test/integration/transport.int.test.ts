import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Cluster, Redis } from 'ioredis';
import { RedisCluster, RedisFleet } from '@org/rlock-testing';
import { RedisCommandError, RedisUnavailableError } from '@org/rlock-core';
import { SCRIPTS, Transport, plainLockKeys, wasNotSent, type EmbeddedScript } from '@org/rlock-core/internal';
import { commandCalls, eventually, holdAt, uniquePrefix } from './support.js';

const ECHO: EmbeddedScript = { numberOfKeys: 1, sha: '', lua: 'return {KEYS[1], ARGV[1]}', args: () => [] };

/** Connected, with the scripts it loads on connecting answered (sent after the first call, they would run later). */
async function connected(t: Transport): Promise<void> {
  await t.call('ping', [], 'PING', '-', String);
  await eventually(() => (t.redis as unknown as { commandQueue: { length: number } }).commandQueue.length === 0, 2_000);
}

/** Each call's error, once every call is checked to have failed with RedisUnavailableError. */
function unavailableReasons(outcomes: readonly PromiseSettledResult<unknown>[]): Error[] {
  return outcomes.map((outcome) => {
    expect(outcome.status).toBe('rejected');
    const reason = (outcome as PromiseRejectedResult).reason as Error;
    expect(reason).toBeInstanceOf(RedisUnavailableError);
    return reason;
  });
}

describe('Transport', () => {
  let fleet: RedisFleet;
  const connections: Redis[] = [];

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
    const sha = (await fleet.client(0).script('LOAD', ECHO.lua)) as string;
    Object.assign(ECHO, { sha });
  });
  afterEach(() => {
    for (const connection of connections.splice(0)) connection.disconnect();
  });
  afterAll(() => fleet.stop());

  function transport(timeoutMs = 2_000, scripts: readonly EmbeddedScript[] = [ECHO]): Transport {
    const redis = new Redis(fleet.url(0));
    connections.push(redis);
    return new Transport(redis, timeoutMs, scripts);
  }

  it('answers many concurrent calls, each with its own reply, in the order sent', async () => {
    const t = transport();
    const order: number[] = [];
    const replies = await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        t.script(ECHO, [`k${i}`, i], 'echo', `k${i}`, (reply) => {
          order.push(i);
          return reply;
        }),
      ),
    );
    expect(replies).toEqual(Array.from({ length: 500 }, (_, i) => [`k${i}`, String(i)]));
    expect(order).toEqual(Array.from({ length: 500 }, (_, i) => i));
  });

  it('lets go of answered calls while later ones are still pending (a busy connection may never drain)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const t = transport();
    const payload = 'x'.repeat(256 * 1024);
    const echo = (i: number): Promise<unknown> => t.call('echo', [`${i}${payload}`], 'echo', 'k', (reply) => reply);
    gc();
    const before = process.memoryUsage().heapUsed;
    let previous = echo(0);
    for (let i = 1; i <= 64; i++) {
      const next = echo(i);
      await previous;
      previous = next;
    }
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    await previous;
    // 64 answered calls of 256 KB each way would hold 32 MB if their commands were kept until the queue drained.
    expect(grown).toBeLessThan(8 * 1024 * 1024);
  });

  it('writes a call at once while at most 4 are unanswered, and holds the rest of the turn for one write', async () => {
    const redis = new Redis(fleet.url(0));
    connections.push(redis);
    const t = new Transport(redis, 2_000, [ECHO]);
    await connected(t);
    const socket = redis.stream;
    const echo = (i: number): Promise<unknown> => t.script(ECHO, [`b${i}`, i], 'echo', `b${i}`, (reply) => reply);
    // A lone call, and the next three beside it, reach the socket in the turn that issued them: Redis starts on
    // them while the client goes on.
    const first = Array.from({ length: 4 }, (_, i) => echo(i));
    expect(socket.writableCorked).toBe(0);
    // Past four unanswered, the turn's commands are corked, their bytes held back for one write.
    const rest = Array.from({ length: 6 }, (_, i) => echo(4 + i));
    expect(socket.writableCorked).toBe(1);
    expect(socket.writableLength).toBeGreaterThan(0);
    expect(await Promise.all([...first, ...rest])).toEqual(Array.from({ length: 10 }, (_, i) => [`b${i}`, String(i)]));
    expect(socket.writableCorked).toBe(0);
    // Answered: the next lone call is written at once again.
    const lone = echo(10);
    expect(socket.writableCorked).toBe(0);
    expect(await lone).toEqual(['b10', '10']);
  });

  it('writes each call at once when not batching (a Redlock master)', async () => {
    const redis = new Redis(fleet.url(0));
    connections.push(redis);
    const t = new Transport(redis, 2_000, [ECHO], false);
    await connected(t);
    const calls = Array.from({ length: 10 }, (_, i) => t.script(ECHO, [`n${i}`, i], 'echo', `n${i}`, (reply) => reply));
    expect(redis.stream.writableCorked).toBe(0);
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 10 }, (_, i) => [`n${i}`, String(i)]));
  });

  it('types an error reply as RedisCommandError naming the key', async () => {
    const t = transport();
    await fleet.client(0).set('plain', 'x');
    const error = await t.call('hget', ['plain', 'f'], 'a read', 'plain', String).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisCommandError);
    expect((error as Error).message).toMatch(/WRONGTYPE.*|plain/);
  });

  it('rejects calls to a frozen server with RedisUnavailableError at its own deadline, and answers again after', async () => {
    const t = transport(300);
    await connected(t);
    await fleet.pause(0);
    try {
      const started = performance.now();
      const outcomes = await Promise.allSettled([1, 2, 3].map((i) => t.call('get', [`x${i}`], 'a read', `x${i}`, String)));
      const elapsed = performance.now() - started;
      for (const outcome of outcomes) {
        expect(outcome.status).toBe('rejected');
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(RedisUnavailableError);
      }
      expect(elapsed).toBeGreaterThanOrEqual(290);
      expect(elapsed).toBeLessThan(3_000);
    } finally {
      await fleet.resume(0);
    }
    expect(await t.call('ping', [], 'PING', '-', String)).toBe('PONG');
  });

  describe('coalescing', () => {
    const ACQUIRE = { single: SCRIPTS.lockAcquire, batch: SCRIPTS.lockAcquireBatch };
    const acquireArgs = (prefix: string, i: number) => {
      const keys = plainLockKeys(prefix, `c${i}`, 'client');
      const { lock, fence, cancelled, clients } = keys;
      return { lock, fence, cancelled, clients, owner: `client:t${i}`, leaseMs: 10_000, op: 'op1', once: '0', waitTtlMs: '0' };
    };
    const acquire = (t: Transport, prefix: string, i: number): Promise<unknown> => {
      const args = acquireArgs(prefix, i);
      return t.coalesced(ACQUIRE, args, 'acquire', args.lock, (reply) => reply);
    };

    it('sends a lone call alone, and the calls queued behind 4 unanswered ones as one batch call, each with its own reply', async () => {
      const redis = fleet.client(0);
      const t = transport(2_000, Object.values(SCRIPTS));
      await connected(t);
      const prefix = uniquePrefix();
      // MONITOR shows every call in the order run: a marker seen there comes after all the calls before it.
      const source = new Redis(fleet.url(0));
      connections.push(source);
      const monitor = await source.monitor();
      connections.push(monitor);
      const seen: string[] = [];
      monitor.on('monitor', (_time: string, args: string[]) => seen.push(args[1] ?? ''));
      const calls = async (): Promise<{ single: number; batch: number }> => {
        const marker = `marker-${seen.length}-${Math.random()}`;
        await redis.echo(marker);
        await eventually(() => seen.includes(marker), 2_000);
        return {
          single: seen.filter((sha) => sha === SCRIPTS.lockAcquire.sha).length,
          batch: seen.filter((sha) => sha === SCRIPTS.lockAcquireBatch.sha).length,
        };
      };
      expect(typeof (await acquire(t, prefix, 100))).toBe('string');
      expect(await calls()).toEqual({ single: 1, batch: 0 });
      // Four go at once; the sixteen made in the same turn behind them go as one call.
      const tokens = await Promise.all(Array.from({ length: 20 }, (_, i) => acquire(t, prefix, i)));
      expect(await calls()).toEqual({ single: 5, batch: 1 });
      for (const token of tokens) expect(token).toMatch(/^\d+$/);
      const held = await Promise.all(tokens.map((_, i) => holdAt(redis, acquireArgs(prefix, i).lock)));
      expect(held.map((hold) => hold?.token)).toEqual(tokens);
    });

    it('batches only calls that agree on the arguments a batch takes once: each hold keeps its own lease', async () => {
      const redis = fleet.client(0);
      const t = transport(2_000, Object.values(SCRIPTS));
      await connected(t);
      const prefix = uniquePrefix();
      const leaseOf = (i: number): number => (i % 2 === 0 ? 10_000 : 60_000);
      await Promise.all(
        Array.from({ length: 12 }, (_, i) => {
          const args = { ...acquireArgs(prefix, i), leaseMs: leaseOf(i) };
          return t.coalesced(ACQUIRE, args, 'acquire', args.lock, (reply) => reply);
        }),
      );
      const ttls = await Promise.all(Array.from({ length: 12 }, (_, i) => redis.pttl(acquireArgs(prefix, i).lock)));
      ttls.forEach((ttl, i) => {
        expect(ttl).toBeLessThanOrEqual(leaseOf(i));
        expect(ttl).toBeGreaterThan(leaseOf(i) - 5_000);
      });
    });

    it('keeps each lease when more batches are open than a call looks through: a call past them gets a batch of its own', async () => {
      const redis = fleet.client(0);
      const t = transport(2_000, Object.values(SCRIPTS));
      await connected(t);
      const prefix = uniquePrefix();
      // 4 go at once; then 12 leases open 12 batches, and the last 12 calls repeat the leases, the earliest past the 8 looked through.
      const leaseOf = (i: number): number => 20_000 + 1_000 * (i < 4 ? 0 : (i - 4) % 12);
      const replies = await Promise.all(
        Array.from({ length: 28 }, (_, i) => {
          const args = { ...acquireArgs(prefix, i), leaseMs: leaseOf(i) };
          return t.coalesced(ACQUIRE, args, 'acquire', args.lock, (reply) => reply);
        }),
      );
      for (const reply of replies) expect(reply).toMatch(/^\d+$/);
      const ttls = await Promise.all(Array.from({ length: 28 }, (_, i) => redis.pttl(acquireArgs(prefix, i).lock)));
      ttls.forEach((ttl, i) => {
        expect(ttl).toBeLessThanOrEqual(leaseOf(i));
        expect(ttl).toBeGreaterThan(leaseOf(i) - 900);
      });
    });

    it('sends a batch as soon as 16 calls queued, before the turn ends, so Redis starts on it while more queue', async () => {
      const redis = new Redis(fleet.url(0));
      connections.push(redis);
      const t = new Transport(redis, 2_000, Object.values(SCRIPTS));
      await connected(t);
      const prefix = uniquePrefix();
      const sent = (): number => (redis as unknown as { commandQueue: { length: number } }).commandQueue.length;
      const first = Array.from({ length: 4 + 15 }, (_, i) => acquire(t, prefix, i));
      // Four written at once; fifteen queued for the turn's end.
      expect(sent()).toBe(4);
      const full = acquire(t, prefix, 19);
      expect(sent()).toBe(5);
      const tokens = await Promise.all([...first, full]);
      for (const token of tokens) expect(token).toMatch(/^\d+$/);
    });

    it('runs the calls of a turn in the order made: a read made after queued calls reads what they wrote', async () => {
      const t = transport(2_000, Object.values(SCRIPTS));
      await connected(t);
      const prefix = uniquePrefix();
      // Four are written at once, four queue behind them; the read comes last and must see the last one's hold.
      const acquired = Array.from({ length: 8 }, (_, i) => acquire(t, prefix, i));
      const read = t.call('exists', [acquireArgs(prefix, 7).lock], 'EXISTS', acquireArgs(prefix, 7).lock, Number);
      expect(await read).toBe(1);
      for (const token of await Promise.all(acquired)) expect(token).toMatch(/^\d+$/);
    });

    it.each([
      ['a full batch sent at once', 0, 15],
      ["another script's queue made before it", 1, 1],
    ])('runs the calls on one lock in the order made, whatever queue each joins: %s', async (_case, before, after) => {
      const t = transport(2_000, Object.values(SCRIPTS));
      await connected(t);
      const prefix = uniquePrefix();
      const RELEASE = { single: SCRIPTS.lockRelease, batch: SCRIPTS.lockReleaseBatch };
      const shared = acquireArgs(prefix, 100);
      expect(await acquire(t, prefix, 100)).toMatch(/^\d+$/);
      // Four are written at once, so what follows queues: acquisitions of other locks, the release of the shared one, then
      // another owner's acquisition of it and more acquisitions (the 16th fills the acquire queue, which then goes at once).
      const others = Array.from({ length: 4 + before }, (_, i) => acquire(t, prefix, i));
      const { lock, released, clients } = plainLockKeys(prefix, 'c100', 'client');
      const releaseArgs = {
        lock,
        released,
        clients,
        owner: shared.owner,
        op: 'op2',
        all: '0',
        token: '',
        replayWindowMs: 60_000,
        sharded: '0',
        requeueTtlMs: '0',
      };
      const release = t.coalesced(RELEASE, releaseArgs, 'release', lock, (reply) => reply);
      const next = t.coalesced(ACQUIRE, { ...shared, owner: 'client:next' }, 'acquire', shared.lock, (reply) => reply);
      const later = Array.from({ length: after }, (_, i) => acquire(t, prefix, 50 + i));
      expect(await release).toBe(0);
      // Granted (a token), not refused by the hold the release made before it took away.
      expect(await next).toMatch(/^\d+$/);
      await Promise.all([...others, ...later]);
    });

    it('fails a queued call alone when its key holds something else, naming that key', async () => {
      const t = transport(2_000, Object.values(SCRIPTS));
      await connected(t);
      const prefix = uniquePrefix();
      await fleet.client(0).set(acquireArgs(prefix, 6).lock, 'not a hold');
      const outcomes = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => acquire(t, prefix, i)));
      outcomes.forEach((outcome, i) => expect(outcome.status).toBe(i === 6 ? 'rejected' : 'fulfilled'));
      const error = (outcomes[6] as PromiseRejectedResult).reason as Error;
      expect(error).toBeInstanceOf(RedisCommandError);
      expect(error.message).toContain(`acquire on "${acquireArgs(prefix, 6).lock}"`);
      expect(error.message).toContain('WRONGTYPE');
    });

    it('fails each call of a batch a frozen server does not answer with its own RedisUnavailableError, bounded in time', async () => {
      const t = transport(300, Object.values(SCRIPTS));
      await connected(t);
      const prefix = uniquePrefix();
      await fleet.pause(0);
      let outcomes: PromiseSettledResult<unknown>[];
      try {
        outcomes = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => acquire(t, prefix, i)));
      } finally {
        await fleet.resume(0);
      }
      unavailableReasons(outcomes).forEach((reason, i) => {
        expect(reason.message).toBe(`Redis did not answer acquire on "${acquireArgs(prefix, i).lock}" within 300 ms`);
      });
    });

    it('fails the calls still queued when the connection goes down as never sent: none of them runs later', async () => {
      const redis = new Redis(fleet.url(0));
      connections.push(redis);
      const t = new Transport(redis, 5_000, Object.values(SCRIPTS));
      await connected(t);
      const prefix = uniquePrefix();
      // A frozen server keeps the first four unanswered, so the next four queue behind them.
      await fleet.pause(0);
      let settled: PromiseSettledResult<unknown>[];
      try {
        const written = Array.from({ length: 4 }, (_, i) => acquire(t, prefix, i));
        // Made in a check-phase callback, the four queued ones go at the next turn's; the socket's close comes before it.
        const queued = await new Promise<Promise<unknown>[]>((resolve) =>
          setImmediate(() => {
            const calls = Array.from({ length: 4 }, (_, i) => acquire(t, prefix, 4 + i));
            (redis as unknown as { stream: { destroy(): void } }).stream.destroy();
            resolve(calls);
          }),
        );
        settled = await Promise.allSettled([...written, ...queued]);
      } finally {
        await fleet.resume(0);
      }
      unavailableReasons(settled).forEach((reason, i) => {
        expect(reason.message).toContain(`acquire on "${acquireArgs(prefix, i).lock}"`);
        // Only the written ones may have run: those an attempt must undo.
        expect(wasNotSent(reason)).toBe(i >= 4);
      });
      await eventually(() => redis.status === 'ready', 5_000);
      await connected(t);
      const holds = await Promise.all([4, 5, 6, 7].map((i) => holdAt(fleet.client(0), acquireArgs(prefix, i).lock)));
      expect(holds).toEqual([undefined, undefined, undefined, undefined]);
    });

    it('runs a batch after SCRIPT FLUSH (EVAL once on NOSCRIPT)', async () => {
      const redis = fleet.client(0);
      const t = transport(2_000, Object.values(SCRIPTS));
      await connected(t);
      await redis.script('FLUSH');
      const prefix = uniquePrefix();
      const evalsBefore = await commandCalls(redis, 'eval');
      const tokens = await Promise.all(Array.from({ length: 8 }, (_, i) => acquire(t, prefix, i)));
      for (const token of tokens) expect(token).toMatch(/^\d+$/);
      // The four single calls and the batch each loaded their script once.
      expect(await commandCalls(redis, 'eval')).toBe(evalsBefore + 5);
    });
  });

  it('runs a script after SCRIPT FLUSH (EVAL once on NOSCRIPT)', async () => {
    const t = transport();
    await fleet.client(0).script('FLUSH');
    expect(await t.script(ECHO, ['k', 'v'], 'echo', 'k', (reply) => reply)).toEqual(['k', 'v']);
    await fleet.client(0).script('LOAD', ECHO.lua);
  });

  it('loads every script when it connects, so the first EVALSHA after a restart finds it', async () => {
    const scripts = Object.values(SCRIPTS);
    const t = transport(2_000, scripts);
    await t.call('ping', [], 'PING', '-', String);
    await fleet.restart(0); // no persistence: an empty server with an empty script cache
    expect(await eventually(async () => (await t.call('ping', [], 'PING', '-', String).catch(() => '')) === 'PONG', 5_000)).toBe(true);
    const evalsBefore = await commandCalls(fleet.client(0), 'eval');
    const reply = await t.run(
      SCRIPTS.lockForceUnlock,
      { lock: 'free-lock', sharded: '0', channel: 'free-lock:release', notices: '' },
      'forceUnlock',
      'free-lock',
      (r) => r,
    );
    expect(reply).toBe(0);
    expect(await commandCalls(fleet.client(0), 'eval')).toBe(evalsBefore);
  });
});

describe('Transport on a Cluster', () => {
  let cluster: RedisCluster;
  let redis: Cluster;

  beforeAll(async () => {
    cluster = await RedisCluster.start({ masters: 3, replicasPerMaster: 0 });
    redis = cluster.client();
    await redis.ping();
  });
  afterAll(() => cluster.stop());

  /** Socket reads each master has handled (INFO stats), summed. */
  async function readsProcessed(): Promise<number> {
    const counts = await Promise.all(
      cluster.masters().map(async (node) => {
        const admin = new Redis(node.port, node.host);
        try {
          return Number(/total_reads_processed:(\d+)/.exec(await admin.info('stats'))?.[1]);
        } finally {
          admin.disconnect();
        }
      }),
    );
    return counts.reduce((sum, count) => sum + count, 0);
  }

  it("routes a turn's calls to their slots' masters, each with its own reply, written to each master together", async () => {
    const t = new Transport(redis, 2_000, [ECHO]);
    await t.call('ping', [], 'PING', '-', String);
    // Warm every master's connection (and script cache) before counting.
    await Promise.all(Array.from({ length: 30 }, (_, i) => t.script(ECHO, [`w{${i}}`, i], 'echo', `w{${i}}`, (reply) => reply)));
    const before = await readsProcessed();
    const calls = 480;
    const replies = await Promise.all(Array.from({ length: calls }, (_, i) => t.script(ECHO, [`k{${i}}`, i], 'echo', `k{${i}}`, (reply) => reply)));
    const reads = (await readsProcessed()) - before;
    expect(replies).toEqual(Array.from({ length: calls }, (_, i) => [`k{${i}}`, String(i)]));
    // The first few calls written at once, the rest corked per batch of 16 commands per master: about 480 / 48
    // batches × 3 masters writes, not one per call (the INFO reads of this check add 3).
    expect(reads).toBeLessThanOrEqual(calls / 8);
  });
});
