import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { RedisFleet, takeHoldLeakWarnings } from '@org/rlock-testing';
import type { LockReleasedEvent, RLock } from '@org/rlock-core';
import type { Redis } from 'ioredis';
import { ClientPool, commandCalls, eventually, holdAt, uniquePrefix } from './support.js';

const WAITER = fileURLToPath(new URL('./fixtures/fair-waiter.mjs', import.meta.url));
const COUNTER = fileURLToPath(new URL('./fixtures/counter-worker.mjs', import.meta.url));

/** A process whose tasks wait for a fair lock when told ("go <label>"), reporting what they get. */
class WaiterProcess {
  readonly lines: { text: string; at: number }[] = [];
  private readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<number | null>;

  constructor(env: Record<string, string>) {
    this.child = spawn(process.execPath, [WAITER], { env: { ...process.env, ...env } });
    let buffer = '';
    this.child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const parts = buffer.split('\n');
      buffer = parts.pop() ?? '';
      for (const text of parts) this.lines.push({ text, at: performance.now() });
    });
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  go(label: string): void {
    this.child.stdin.write(`go ${label}\n`);
  }

  end(): void {
    this.child.stdin.end();
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}

/** A held fair lock reentered: Redis and the client count 2, and two unlocks free it. */
async function expectReentryCountsTwo(lock: RLock, redis: Redis, key: string): Promise<void> {
  await lock.lock({ leaseMs: 10_000 });
  expect((await holdAt(redis, key))?.count).toBe(2);
  expect(await lock.getHoldCount()).toBe(2);
  await lock.unlock();
  expect((await holdAt(redis, key))?.count).toBe(1);
  await lock.unlock();
  expect(await redis.exists(key)).toBe(0);
}

describe('fair lock', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();
  const processes: WaiterProcess[] = [];

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(async () => {
    for (const waiter of processes.splice(0)) waiter.kill();
    await pool.closeAll();
  });
  afterAll(() => fleet.stop());

  const queueLength = (prefix: string, name: string) => fleet.client(0).llen(`${prefix}:{${name}}:queue`);

  it('serves waiters of 3 processes in arrival order', async () => {
    const holder = pool.make(fleet.url(0));
    const prefix = holder.options.keyPrefix;
    const held = await holder.getFairLock('fifo').acquire({ leaseMs: 30_000 });
    const waiters = [0, 1, 2].map(() => new WaiterProcess({ REDIS_URL: fleet.url(0), PREFIX: prefix, NAME: 'fifo', HOLD_MS: '5' }));
    processes.push(...waiters);
    const labels = Array.from({ length: 9 }, (_, i) => `w${i}`);
    for (const [i, label] of labels.entries()) {
      (waiters[i % 3] as WaiterProcess).go(label);
      // Arrival order is the order of joining the queue in Redis.
      expect(await eventually(async () => (await queueLength(prefix, 'fifo')) === i + 1, 10_000)).toBe(true);
    }
    await held.unlock();
    for (const waiter of waiters) waiter.end();
    await Promise.all(waiters.map((waiter) => waiter.exited));
    const acquired = waiters
      .flatMap((waiter) => waiter.lines)
      .filter((line) => line.text.startsWith('acquired'))
      .sort((a, b) => a.at - b.at)
      .map((line) => line.text.split(' ')[1]);
    expect(acquired).toEqual(labels);
  });

  it('holds the waiters behind a SIGKILLed one up no longer than its waiter lease', async () => {
    const watchdogTimeoutMs = 1_500; // the waiter lease
    const holder = pool.make(fleet.url(0), { watchdogTimeoutMs });
    const prefix = holder.options.keyPrefix;
    const held = await holder.getFairLock('dead').acquire({ leaseMs: 30_000 });
    const env = { REDIS_URL: fleet.url(0), PREFIX: prefix, NAME: 'dead', HOLD_MS: '5', WATCHDOG_MS: String(watchdogTimeoutMs) };
    const [first, dead, last] = [new WaiterProcess(env), new WaiterProcess(env), new WaiterProcess(env)];
    processes.push(first, dead, last);
    for (const [i, waiter] of [first, dead, last].entries()) {
      waiter.go(`w${i}`);
      expect(await eventually(async () => (await queueLength(prefix, 'dead')) === i + 1, 10_000)).toBe(true);
    }
    dead.kill();
    await dead.exited;
    const killedAt = performance.now();
    await held.unlock();
    expect(await eventually(() => last.lines.some((line) => line.text === 'acquired w2'), 10_000)).toBe(true);
    const lastAt = (last.lines.find((line) => line.text === 'acquired w2') as { at: number }).at;
    expect(first.lines.some((line) => line.text === 'acquired w0')).toBe(true);
    // The dead waiter renewed its place up to its kill: the one behind it waits
    // out at most its lease (plus a try's round trip), not a full watchdog period more.
    expect(lastAt - killedAt).toBeLessThan(watchdogTimeoutMs + 1_000);
  });

  it('never drops a live waiter that waits for many waiter leases', async () => {
    const watchdogTimeoutMs = 300; // waiter lease: the wait below is ten of them
    const holder = pool.make(fleet.url(0), { watchdogTimeoutMs });
    const waiter = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix, watchdogTimeoutMs });
    const late = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix, watchdogTimeoutMs });
    const prefix = holder.options.keyPrefix;
    const held = await holder.getFairLock('patient').acquire({ leaseMs: 30_000 });
    const order: string[] = [];
    const patient = waiter.task(async () => {
      await waiter.getFairLock('patient').lock({ leaseMs: 5_000 });
      order.push('patient');
      await waiter.getFairLock('patient').unlock();
    });
    expect(await eventually(async () => (await queueLength(prefix, 'patient')) === 1, 5_000)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const newcomer = late.task(async () => {
      await late.getFairLock('patient').lock({ leaseMs: 5_000 });
      order.push('newcomer');
      await late.getFairLock('patient').unlock();
    });
    expect(await eventually(async () => (await queueLength(prefix, 'patient')) === 2, 5_000)).toBe(true);
    await held.unlock();
    await Promise.all([patient, newcomer]);
    expect(order).toEqual(['patient', 'newcomer']);
  });

  it('never queues a tryLock that does not wait, and takes a waiter that gives up out of the queue', async () => {
    const holder = pool.make(fleet.url(0));
    const other = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
    const prefix = holder.options.keyPrefix;
    const held = await holder.getFairLock('try').acquire({ leaseMs: 30_000 });
    expect(await other.task(() => other.getFairLock('try').tryLock({ leaseMs: 1_000 }))).toBe(false);
    expect(await queueLength(prefix, 'try')).toBe(0);
    expect(await other.task(() => other.getFairLock('try').tryLock({ leaseMs: 1_000, waitMs: 200 }))).toBe(false);
    expect(await queueLength(prefix, 'try')).toBe(0);
    expect(await fleet.client(0).exists(`${prefix}:{try}:waiters`)).toBe(0);
    await held.unlock();
  });

  it('reenters without queueing, even with others queued', async () => {
    const holder = pool.make(fleet.url(0));
    const other = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
    const prefix = holder.options.keyPrefix;
    await holder.task(async () => {
      const lock = holder.getFairLock('reenter');
      await lock.lock({ leaseMs: 10_000 });
      const waiting = other.task(async () => {
        const queued = other.getFairLock('reenter');
        await queued.lock({ leaseMs: 1_000 });
        await queued.unlock();
      });
      expect(await eventually(async () => (await queueLength(prefix, 'reenter')) === 1, 5_000)).toBe(true);
      await lock.lock({ leaseMs: 10_000 });
      expect(await lock.getHoldCount()).toBe(2);
      await lock.unlock();
      await lock.unlock();
      await waiting;
    });
  });

  it('wakes one waiter per release with a bounded number of tries while they wait', async () => {
    const holder = pool.make(fleet.url(0));
    const prefix = holder.options.keyPrefix;
    const held = await holder.getFairLock('herd').acquire({ leaseMs: 30_000 });
    // Counted from before the waiters start: each joins with two tries (one
    // before its subscription is acknowledged, one after: each is the first
    // waiter of its client), and when the second lands is not something the
    // test can see, so both are in the budget.
    const evalsBefore = await commandCalls(fleet.client(0), 'evalsha');
    const waiters = Array.from({ length: 8 }, () => pool.make(fleet.url(0), { keyPrefix: prefix }));
    const done = waiters.map((client) => client.getFairLock('herd').withLock(() => new Promise((resolve) => setTimeout(resolve, 20)), { leaseMs: 5_000 }));
    expect(await eventually(async () => (await queueLength(prefix, 'herd')) === 8, 5_000)).toBe(true);
    await held.unlock();
    await Promise.all(done);
    const tries = (await commandCalls(fleet.client(0), 'evalsha')) - evalsBefore;
    // 8 × 2 joining tries, then each hand-off is one release (1 + 8), which
    // hands the lock to the head in the same script, and the head's one try
    // that claims it (8). Two spare. A herd (every waiter trying on every
    // release) would be 8 × 8 more.
    expect(tries).toBeLessThanOrEqual(8 * 2 + 1 + 8 + 8 + 2);
  });

  it("gives the head the lock in the release's script, and the head claims it with one try: grant and token come from that reply", async () => {
    const holder = pool.make(fleet.url(0));
    const prefix = holder.options.keyPrefix;
    const waiter = pool.make(fleet.url(0), { keyPrefix: prefix });
    const redis = fleet.client(0);
    const key = `${prefix}:{handed}`;
    const held = await holder.getFairLock('handed').acquire({ leaseMs: 30_000 });
    await waiter.task(async () => {
      const lock = waiter.getFairLock('handed');
      const evalsStart = await commandCalls(redis, 'evalsha');
      const waiting = lock.lock({ leaseMs: 10_000 });
      // The waiter's two tries (before and after its subscription's acknowledgement) are in.
      expect(await eventually(async () => (await commandCalls(redis, 'evalsha')) - evalsStart === 2, 5_000)).toBe(true);
      expect(await queueLength(prefix, 'handed')).toBe(1);
      const evalsBefore = await commandCalls(redis, 'evalsha');
      await held.unlock();
      await waiting;
      // Two scripts: the release, which hands the hold to the head, and the head's claim (its next try).
      expect((await commandCalls(redis, 'evalsha')) - evalsBefore).toBe(2);
      const handed = await holdAt(redis, key);
      expect(handed?.owner).toMatch(new RegExp(`^${waiter.clientId}:`));
      expect(handed?.count).toBe(1);
      // Its own lease (10 s), not the holder's 30 s nor its 30 s waiter lease.
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(5_000);
      expect(ttl).toBeLessThanOrEqual(10_000);
      expect(await lock.getHoldCount()).toBe(1);
      expect(await lock.isHeldByCurrentTask()).toBe(true);
      await expectReentryCountsTwo(lock, redis, key);
    });
  });

  it("hands the lock to a waiter of the releasing client by the release's reply: no message, no claim", async () => {
    const client = pool.make(fleet.url(0));
    const prefix = client.options.keyPrefix;
    const redis = fleet.client(0);
    const key = `${prefix}:{own}`;
    const listener = redis.duplicate();
    const heard: string[] = [];
    listener.on('pmessage', (_pattern: string, channel: string) => heard.push(channel));
    await listener.psubscribe(`${prefix}:{own}:release*`);
    try {
      const held = await client.getFairLock('own').acquire({ leaseMs: 30_000 });
      const waiting = client.getFairLock('own').acquire({ leaseMs: 10_000 });
      expect(await eventually(async () => (await queueLength(prefix, 'own')) === 1, 5_000)).toBe(true);
      const [queued] = await redis.lrange(`${key}:queue`, 0, 0);
      const evalsBefore = await commandCalls(redis, 'evalsha');
      await held.unlock();
      const handle = await waiting;
      // One script: the release, whose reply grants the head; the head sends no claim.
      expect((await commandCalls(redis, 'evalsha')) - evalsBefore).toBe(1);
      const handed = await holdAt(redis, key);
      expect(handed?.owner).toBe(queued);
      expect(handle.token).toBe(handed?.token);
      // Not yet counted in Redis (count 0: one hold), living the head's own lease (10 s).
      expect(handed?.count).toBe(0);
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(5_000);
      expect(ttl).toBeLessThanOrEqual(10_000);
      // No message went out for this hand-off.
      expect(heard).toHaveLength(0);
      await handle.unlock();
      expect(await redis.exists(key)).toBe(0);
    } finally {
      await listener.quit();
    }
  });

  it('counts a reentry on a hand-off from a release reply as two, and frees it after two unlocks', async () => {
    const client = pool.make(fleet.url(0));
    const prefix = client.options.keyPrefix;
    const redis = fleet.client(0);
    // The reply's hand-off is taken only while nothing of the waiter is out; a try still in flight (the one after its
    // SUBSCRIBE) claims instead (count 1). Either way a reentry counts two; rounds go on until one took the reply's.
    let fromReply = false;
    for (let round = 0; round < 5 && !fromReply; round++) {
      const name = `nested${round}`;
      const key = `${prefix}:{${name}}`;
      const held = await client.getFairLock(name).acquire({ leaseMs: 30_000 });
      const waiting = client.task(async () => {
        const lock = client.getFairLock(name);
        await lock.lock({ leaseMs: 10_000 });
        const count = (await holdAt(redis, key))?.count;
        fromReply = count === 0;
        expect([0, 1]).toContain(count);
        expect(await lock.getHoldCount()).toBe(1);
        expect(await lock.isHeldByCurrentTask()).toBe(true);
        await expectReentryCountsTwo(lock, redis, key);
      });
      expect(await eventually(async () => (await queueLength(prefix, name)) === 1, 5_000)).toBe(true);
      await held.unlock();
      await waiting;
    }
    expect(fromReply).toBe(true);
  });

  it('serves 8 tasks of one client in arrival order, one at a time, over many rounds of hand-offs by reply', async () => {
    const client = pool.make(fleet.url(0));
    const prefix = client.options.keyPrefix;
    const redis = fleet.client(0);
    const rounds = 40;
    let inside = 0;
    let overlaps = 0;
    let sections = 0;
    const order: number[] = [];
    const evalsBefore = await commandCalls(redis, 'evalsha');
    await Promise.all(
      Array.from({ length: 8 }, (_, task) =>
        client.task(async () => {
          const lock = client.getFairLock('many');
          for (let round = 0; round < rounds; round++) {
            await lock.lock({ leaseMs: 10_000 });
            if (++inside > 1) overlaps++;
            order.push(task);
            await redis.incr(`${prefix}:data:counter`);
            sections++;
            inside--;
            await lock.unlock();
          }
        }),
      ),
    );
    expect(overlaps).toBe(0);
    expect(sections).toBe(8 * rounds);
    // Per section: the try that queues and the release, whose reply grants the next head (no claim); a first try
    // before and after the subscription for each task, and two spare.
    expect((await commandCalls(redis, 'evalsha')) - evalsBefore).toBeLessThanOrEqual(8 * rounds * 2 + 8 * 2 + 2);
    expect(Number(await redis.get(`${prefix}:data:counter`))).toBe(8 * rounds);
    // Arrival order: once all 8 queue, each task's next turn comes after the other 7 (a task that re-locks joins at the back).
    // (Checked while all 8 still loop: the last 8 turns are each task's final one.)
    const steady = order.slice(16, order.length - 8);
    const tooSoon = steady.filter((task, i) => {
      const last = steady.lastIndexOf(task, i - 1);
      return i > 0 && last !== -1 && i - last < 8;
    }).length;
    expect(tooSoon).toBe(0);
    expect(await redis.exists(`${prefix}:{many}`)).toBe(0);
  });

  it('claims a hand-off with a try however old the last try is: the lease then runs whole from the claim', async () => {
    const holder = pool.make(fleet.url(0));
    const prefix = holder.options.keyPrefix;
    const waiter = pool.make(fleet.url(0), { keyPrefix: prefix });
    const redis = fleet.client(0);
    const key = `${prefix}:{aged}`;
    const held = await holder.getFairLock('aged').acquire({ leaseMs: 30_000 });
    const evalsStart = await commandCalls(redis, 'evalsha');
    const waiting = waiter.getFairLock('aged').acquire({ leaseMs: 1_000 });
    expect(await eventually(async () => (await commandCalls(redis, 'evalsha')) - evalsStart === 2, 5_000)).toBe(true);
    // Its last try is now over a tenth of its 1 s lease old.
    await new Promise((resolve) => setTimeout(resolve, 250));
    const evalsBefore = await commandCalls(redis, 'evalsha');
    await held.unlock();
    const handle = await waiting;
    // The release, then the waiter's claim (count 1, its lease restarted).
    expect((await commandCalls(redis, 'evalsha')) - evalsBefore).toBe(2);
    expect((await holdAt(redis, key))?.count).toBe(1);
    expect(await redis.pttl(key)).toBeGreaterThan(800);
    await handle.unlock();
  });

  it('has a task joining a channel its client already listens on try once, not twice', async () => {
    const holder = pool.make(fleet.url(0));
    const prefix = holder.options.keyPrefix;
    const waiter = pool.make(fleet.url(0), { keyPrefix: prefix });
    const redis = fleet.client(0);
    const held = await holder.getFairLock('joins').acquire({ leaseMs: 30_000 });
    const evalsBefore = await commandCalls(redis, 'evalsha');
    const wait = () => waiter.task(() => waiter.getFairLock('joins').withLock(() => undefined, { leaseMs: 5_000 }));
    // The client's first waiter subscribes, and tries before and after the acknowledgement.
    const first = wait();
    expect(await eventually(async () => (await commandCalls(redis, 'evalsha')) - evalsBefore === 2, 5_000)).toBe(true);
    // Three more join the subscribed channel: one try each.
    const more = [wait(), wait(), wait()];
    expect(await eventually(async () => (await queueLength(prefix, 'joins')) === 4, 5_000)).toBe(true);
    expect((await commandCalls(redis, 'evalsha')) - evalsBefore).toBe(2 + 3);
    await held.unlock();
    await Promise.all([first, ...more]);
  });

  it('takes a hand-off only when it names a try of the waiting call: a late or foreign message is not a grant', async () => {
    const holder = pool.make(fleet.url(0));
    const prefix = holder.options.keyPrefix;
    const waiter = pool.make(fleet.url(0), { keyPrefix: prefix });
    const redis = fleet.client(0);
    const key = `${prefix}:{late}`;
    const held = await holder.getFairLock('late').acquire({ leaseMs: 30_000 });
    const waiting = waiter.getFairLock('late').acquire({ leaseMs: 10_000 });
    expect(await eventually(async () => (await queueLength(prefix, 'late')) === 1, 5_000)).toBe(true);
    const [owner] = await redis.lrange(`${key}:queue`, 0, 0);
    // A hand-off for this owner naming a try this call never made (as a message
    // for an earlier call, arriving late): on the same channel, so it is
    // delivered before the real one below.
    await redis.publish(`${key}:release:${waiter.clientId}`, `${owner} 999 an-earlier-call`);
    await held.unlock();
    const handle = await waiting;
    expect(handle.token).toBe((await holdAt(redis, key))?.token);
    expect(handle.token).not.toBe('999');
    await handle.unlock();
    expect(await redis.exists(key)).toBe(0);
  });

  it("tells only the head's client: one message per hand-off, on that client's own channel", async () => {
    const holder = pool.make(fleet.url(0));
    const prefix = holder.options.keyPrefix;
    const [first, second] = [0, 1].map(() => pool.make(fleet.url(0), { keyPrefix: prefix }));
    const listener = fleet.client(0).duplicate();
    const heard: { channel: string; message: string }[] = [];
    listener.on('pmessage', (_pattern: string, channel: string, message: string) => heard.push({ channel, message }));
    await listener.psubscribe(`${prefix}:{heads}:release*`);
    try {
      const held = await holder.getFairLock('heads').acquire({ leaseMs: 30_000 });
      const firstDone = first!.getFairLock('heads').acquire({ leaseMs: 30_000 });
      expect(await eventually(async () => (await queueLength(prefix, 'heads')) === 1, 5_000)).toBe(true);
      const secondDone = second!.getFairLock('heads').acquire({ leaseMs: 30_000 });
      expect(await eventually(async () => (await queueLength(prefix, 'heads')) === 2, 5_000)).toBe(true);
      await held.unlock();
      const firstHandle = await firstDone;
      expect(await eventually(() => heard.length >= 1, 5_000)).toBe(true);
      expect(heard).toHaveLength(1);
      expect(heard[0]!.channel).toBe(`${prefix}:{heads}:release:${first!.clientId}`);
      expect(heard[0]!.message.startsWith(`${first!.clientId}:`)).toBe(true);
      await firstHandle.unlock();
      const secondHandle = await secondDone;
      expect(await eventually(() => heard.length >= 2, 5_000)).toBe(true);
      expect(heard[1]!.channel).toBe(`${prefix}:{heads}:release:${second!.clientId}`);
      await secondHandle.unlock();
      // Nobody queued: a release announces nothing.
      expect(heard).toHaveLength(2);
    } finally {
      await listener.quit();
    }
  });

  it('hands a lock freed by forceUnlock to the queue head at once, not at its next timed try', async () => {
    const holder = pool.make(fleet.url(0));
    const prefix = holder.options.keyPrefix;
    const waiter = pool.make(fleet.url(0), { keyPrefix: prefix });
    const admin = pool.make(fleet.url(0), { keyPrefix: prefix });
    // The holder's lease, and so the waiter's timed retry, is 60 s away.
    await holder.getFairLock('forced').acquire({ leaseMs: 60_000 });
    const waiting = waiter.getFairLock('forced').acquire({ leaseMs: 10_000, waitMs: 20_000 });
    expect(await eventually(async () => (await queueLength(prefix, 'forced')) === 1, 5_000)).toBe(true);
    const forcedAt = performance.now();
    expect(await admin.getFairLock('forced').forceUnlock()).toBe(true);
    const handle = await waiting;
    expect(performance.now() - forcedAt).toBeLessThan(2_000);
    await handle.unlock();
  });

  it('finishes a release whose reply came after its timeout as released: the replay is answered by the marker, not read as a hand-off', async () => {
    // Writes paused for longer than commandTimeoutMs: the release runs after its caller gave up, and the background
    // finish sends the same op again, which the replay marker answers with a bare 0.
    const holder = pool.make(fleet.url(0), { commandTimeoutMs: 300 });
    const errors: unknown[] = [];
    holder.on('error', (error) => errors.push(error));
    const released = new Promise<LockReleasedEvent>((resolve) => holder.once('lockReleased', resolve));
    const handle = await holder.task(() => holder.getFairLock('late-release').acquire({ leaseMs: 30_000 }));
    await fleet.client(0).call('CLIENT', 'PAUSE', '800', 'WRITE');
    await expect(handle.unlock()).rejects.toThrow();
    expect((await released).via).toBe('retry');
    expect(await holder.getFairLock('late-release').isLocked()).toBe(false);
    expect(errors).toEqual([]);
    takeHoldLeakWarnings();
  });

  it('never lets holders of 4 processes overlap', async () => {
    const prefix = uniquePrefix();
    const runs = [1, 2, 3, 4].map(
      (worker) =>
        new Promise<void>((resolve, reject) => {
          const child = spawn(process.execPath, [COUNTER], {
            env: { ...process.env, REDIS_URL: fleet.url(0), PREFIX: prefix, TASKS: '4', ROUNDS: '25', WORKER: String(worker), KIND: 'fair' },
          });
          let stderr = '';
          child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`worker exited with ${code}: ${stderr}`))));
        }),
    );
    await Promise.all(runs);
    const redis = fleet.client(0);
    expect(Number(await redis.get(`${prefix}:data:counter`))).toBe(4 * 4 * 25);
    expect(Number((await redis.get(`${prefix}:data:overlaps`)) ?? 0)).toBe(0);
  });
});
