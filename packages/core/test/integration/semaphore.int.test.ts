import { ClientClosedError, InvalidArgumentError, LockAcquireTimeoutError, RedisUnavailableError, type RLockClient } from '@org/rlock-core';
import { FaultProxy, RedisFleet } from '@org/rlock-testing';
import { fixture, runChild, startChild } from './child-processes.js';
import { ClientPool, commandCalls, eventually, uniquePrefix } from './support.js';

describe('RSemaphore', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  const scriptCalls = async () => {
    const redis = fleet.client(0);
    return (await commandCalls(redis, 'evalsha')) + (await commandCalls(redis, 'eval'));
  };

  /** Resolves once `n` more script calls than `base` reached the server (each waiter's tries, say). */
  const callsReach = (base: number, n: number) => eventually(async () => (await scriptCalls()) - base >= n, 5_000);

  describe('arguments', () => {
    it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, '1', null])(
      'refuses the count %p with InvalidArgumentError before any command',
      async (bad) => {
        const semaphore = pool.make(fleet.url(0)).getSemaphore('args');
        const before = await scriptCalls();
        const count = bad as number;
        await expect(semaphore.acquire(count)).rejects.toBeInstanceOf(InvalidArgumentError);
        await expect(semaphore.tryAcquire(count)).rejects.toBeInstanceOf(InvalidArgumentError);
        await expect(semaphore.release(count)).rejects.toBeInstanceOf(InvalidArgumentError);
        await expect(semaphore.trySetPermits(count)).rejects.toBeInstanceOf(InvalidArgumentError);
        if (bad !== -1) await expect(semaphore.addPermits(count)).rejects.toBeInstanceOf(InvalidArgumentError);
        expect(await scriptCalls()).toBe(before);
      },
    );

    it('takes negative deltas in addPermits only, and refuses unknown options and bad waits', async () => {
      const semaphore = pool.make(fleet.url(0)).getSemaphore('args2');
      await expect(semaphore.addPermits(-(2 ** 31))).rejects.toBeInstanceOf(InvalidArgumentError);
      expect(await semaphore.addPermits(-2)).toBe(-2);
      await expect(semaphore.acquire(1, { leaseMs: 1_000 } as never)).rejects.toThrow(/unknown option "leaseMs"/);
      await expect(semaphore.acquire({ waitMs: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(semaphore.tryAcquire(1, { signal: 'no' } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    });

    it('checks the name synchronously, and refuses calls once the client is closed', async () => {
      const client = pool.make(fleet.url(0));
      expect(() => client.getSemaphore('')).toThrow(InvalidArgumentError);
      expect(() => client.getSemaphore('a{b}')).toThrow(InvalidArgumentError);
      const semaphore = client.getSemaphore('closed');
      await client.close();
      expect(() => client.getSemaphore('x')).toThrow(ClientClosedError);
      await expect(semaphore.acquire()).rejects.toBeInstanceOf(ClientClosedError);
      await expect(semaphore.release()).rejects.toBeInstanceOf(ClientClosedError);
    });
  });

  describe('permits', () => {
    it('sets permits once, counts acquisitions and releases, and drains', async () => {
      const client = pool.make(fleet.url(0));
      const semaphore = client.getSemaphore('basic');
      expect(await semaphore.availablePermits()).toBe(0);
      expect(await semaphore.trySetPermits(5)).toBe(true);
      expect(await semaphore.trySetPermits(9)).toBe(false);
      await semaphore.acquire(2);
      expect(await semaphore.tryAcquire(4)).toBe(false);
      expect(await semaphore.tryAcquire({})).toBe(true);
      expect(await semaphore.availablePermits()).toBe(2);
      await semaphore.release(3);
      expect(await semaphore.availablePermits()).toBe(5);
      expect(await semaphore.addPermits(2)).toBe(7);
      expect(await semaphore.drainPermits()).toBe(7);
      expect(await semaphore.availablePermits()).toBe(0);
      expect(await client.redis.get(`${client.options.keyPrefix}:{basic}`)).toBe('0');
    });

    it('lets anyone release: permits are not owned', async () => {
      const a = pool.make(fleet.url(0));
      const b = pool.make(fleet.url(0), { keyPrefix: a.options.keyPrefix });
      await a.getSemaphore('owned').trySetPermits(1);
      await a.getSemaphore('owned').acquire();
      expect(await b.getSemaphore('owned').tryAcquire()).toBe(false);
      await b.getSemaphore('owned').release();
      expect(await b.getSemaphore('owned').tryAcquire()).toBe(true);
    });

    it('makes acquirers wait while addPermits keeps the count below zero', async () => {
      const client = pool.make(fleet.url(0));
      const semaphore = client.getSemaphore('negative');
      await semaphore.trySetPermits(1);
      expect(await semaphore.addPermits(-3)).toBe(-2);
      expect(await semaphore.tryAcquire({ waitMs: 50 })).toBe(false);
      await semaphore.release(3);
      expect(await semaphore.tryAcquire()).toBe(true);
    });
  });

  describe('syncReplicas', () => {
    it('does not count permits no replica acknowledged: the grant is undone and the pool stays full', async () => {
      const setup = pool.make(fleet.url(0));
      // A lone server has no replica: WAIT 1 gets 0 acknowledgements.
      const client = pool.make(fleet.url(0), { keyPrefix: setup.options.keyPrefix, commandTimeoutMs: 500, syncReplicas: { replicas: 1, timeoutMs: 50 } });
      await setup.getSemaphore('sync').trySetPermits(2);
      await expect(client.getSemaphore('sync').acquire(2)).rejects.toThrow(/replicas acknowledged/);
      await expect(client.getSemaphore('sync').tryAcquire(1)).rejects.toThrow(/replicas acknowledged/);
      expect(await eventually(async () => (await setup.getSemaphore('sync').availablePermits()) === 2, 2_000)).toBe(true);
      // Without syncReplicas the same permits are there to take.
      expect(await setup.getSemaphore('sync').tryAcquire(2)).toBe(true);
    });
  });

  describe('an acquire whose reply is lost', () => {
    /**
     * A semaphore of 2 permits reached through a FaultProxy whose every chunk is `delayMs` late, so an acquire runs
     * while its reply is still on its way; `permits()` reads the count straight from the server.
     */
    const throughSlowLink = async (
      name: string,
      commandTimeoutMs: number,
      delayMs: number,
      fn: (probe: { proxy: FaultProxy; acquiring: Promise<boolean>; permits: () => Promise<string | null> }) => Promise<void>,
    ) => {
      const proxy = await FaultProxy.start({ port: fleet.port(0) });
      try {
        const setup = pool.make(fleet.url(0));
        const client = pool.make(proxy.url, { keyPrefix: setup.options.keyPrefix, commandTimeoutMs });
        const semaphore = client.getSemaphore(name);
        await setup.getSemaphore(name).trySetPermits(2);
        await semaphore.availablePermits();
        const key = `${setup.options.keyPrefix}:{${name}}`;
        proxy.delay(delayMs);
        // Without a wait: no second try, so only the undo can change the count afterwards.
        const acquiring = semaphore.tryAcquire(1);
        acquiring.catch(() => undefined);
        const permits = () => fleet.client(0).get(key);
        expect(await eventually(async () => (await permits()) === '1', 3_000)).toBe(true);
        await fn({ proxy, acquiring, permits });
      } finally {
        await proxy.stop();
      }
    };

    it('gives its permits back once the connection is back: the undo is sent again until Redis answers', async () => {
      await throughSlowLink('lost-reply', 5_000, 400, async ({ proxy, acquiring, permits }) => {
        proxy.reset();
        proxy.heal();
        // The undo found the connection down: it is sent again once ioredis reconnects, while the acquire's marker lives.
        expect(await eventually(async () => (await permits()) === '2', 4_000)).toBe(true);
        // Failed by the reset itself, not by commandTimeoutMs: the reply can never come.
        await expect(acquiring).rejects.toThrow(RedisUnavailableError);
        await expect(acquiring).rejects.toThrow(/ECONNRESET|closed/);
      });
    });

    it('gives its permits back when its cancel runs long after it, behind a stalled server: the acquire marker outlives the call', async () => {
      await throughSlowLink('stalled-cancel', 400, 300, async ({ acquiring, permits }) => {
        // The reply comes after commandTimeoutMs, and the cancel the timeout sends waits behind writes paused for
        // longer than commandTimeoutMs: it runs well past a marker that lived commandTimeoutMs.
        await fleet.client(0).call('CLIENT', 'PAUSE', '700', 'WRITE');
        await expect(acquiring).rejects.toThrow(/did not answer/);
        expect(await eventually(async () => (await permits()) === '2', 3_000)).toBe(true);
      });
    });
  });

  describe('waiting', () => {
    it("rejects with LockAcquireTimeoutError at waitMs, and with the signal's reason on abort, taking nothing", async () => {
      const client = pool.make(fleet.url(0));
      const semaphore = client.getSemaphore('timeout');
      await semaphore.trySetPermits(1);
      await expect(semaphore.acquire(2, { waitMs: 100 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);
      const controller = new AbortController();
      const waiting = semaphore.acquire(2, { signal: controller.signal });
      const reason = new Error('stop');
      setTimeout(() => controller.abort(reason), 50);
      await expect(waiting).rejects.toBe(reason);
      expect(await semaphore.availablePermits()).toBe(1);
    });

    it('hands nothing to a waiter cut off while its subscription was still unacknowledged: the permit goes back to Redis', async () => {
      const client = pool.make(fleet.url(0));
      const other = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
      const semaphore = client.getSemaphore('orphan');
      await semaphore.trySetPermits(1);
      await semaphore.acquire();
      // Freeze Redis right after the waiter's first (refused) try: its SUBSCRIBE stays unanswered.
      const store = (semaphore as unknown as { store: { acquire: (...args: unknown[]) => Promise<unknown> } }).store;
      const acquire = store.acquire.bind(store);
      let frozen = false;
      store.acquire = async (...args) => {
        const reply = await acquire(...args);
        if (!frozen) {
          frozen = true;
          await fleet.pause(0);
        }
        return reply;
      };
      const controller = new AbortController();
      const waiting = semaphore.acquire({ signal: controller.signal });
      expect(await eventually(() => frozen, 2_000)).toBe(true);
      const reason = new Error('gave up');
      controller.abort(reason);
      await expect(waiting).rejects.toBe(reason);
      store.acquire = acquire;
      // The release finds no waiter of this client, so it goes to Redis (answered once Redis runs again).
      const releasing = semaphore.release();
      await fleet.resume(0);
      await releasing;
      expect(await other.getSemaphore('orphan').tryAcquire({ waitMs: 1_000 })).toBe(true);
    });

    it('wakes the waiter the returned permits fit, even while it is busy trying and another one sleeps', async () => {
      const x = pool.make(fleet.url(0));
      const y = pool.make(fleet.url(0), { keyPrefix: x.options.keyPrefix });
      await y.getSemaphore('fit').trySetPermits(2);
      await y.getSemaphore('fit').acquire(2);
      // A (wants 1) hears its refusals late, as when a refused reply is processed after the release message.
      const semaphore = x.getSemaphore('fit');
      const store = (semaphore as unknown as { store: { acquire: (keys: unknown, marker: string, permits: number) => Promise<string> } }).store;
      const acquire = store.acquire.bind(store);
      store.acquire = async (keys, marker, permits) => {
        const reply = await acquire(keys, marker, permits);
        if (permits === 1 && reply === 'refused') await new Promise((resolve) => setTimeout(resolve, 300));
        return reply;
      };
      const started = performance.now();
      const a = semaphore.acquire(1).then(() => performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 350)); // A joined; its next try is out
      const b = semaphore.acquire(2, { waitMs: 30_000 }); // B (wants 2) sleeps
      await new Promise((resolve) => setTimeout(resolve, 50));
      await y.getSemaphore('fit').release(1); // "1:1": only A fits
      // Woken by id, A takes it at its next sleep; a wake spent on B would leave it asleep for a third of the 30 s lease.
      expect(await a).toBeLessThan(3_000);
      await y.getSemaphore('fit').release(1);
      await semaphore.release(1);
      await b;
      await semaphore.release(2);
    });

    it('wakes a waiter by the release message, with at most two script calls while it waits', async () => {
      const holder = pool.make(fleet.url(0));
      const waiter = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
      await holder.getSemaphore('wake').trySetPermits(1);
      await holder.getSemaphore('wake').acquire();
      const before = await scriptCalls();
      let acquiredAt = 0;
      const waiting = waiter
        .getSemaphore('wake')
        .acquire()
        .then(() => (acquiredAt = performance.now()));
      expect(await callsReach(before, 2)).toBe(true);
      // The waiter's capped sleep is watchdogTimeoutMs / 3 = 10 s: only the
      // release message can wake it within the bound below.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await scriptCalls()) - before).toBe(2); // the first try, and the try after the subscription
      const releasedAt = performance.now();
      await holder.getSemaphore('wake').release();
      await waiting;
      expect(acquiredAt - releasedAt).toBeLessThan(1_000);
    });

    it('wakes as many local waiters as the released permits let proceed: not all, not one', async () => {
      const holder = pool.make(fleet.url(0));
      const waiters = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
      const semaphore = waiters.getSemaphore('wakeN');
      const before = await scriptCalls();
      let acquired = 0;
      const all = Array.from({ length: 5 }, () => semaphore.acquire().then(() => acquired++));
      expect(await callsReach(before, 10)).toBe(true); // two tries each, then asleep
      const beforeRelease = await scriptCalls();
      await holder.getSemaphore('wakeN').release(3);
      expect(await eventually(() => acquired === 3, 2_000)).toBe(true);
      // Tries woken by the same message go out together: had more been woken,
      // their tries would have reached the server by now.
      await holder.redis.ping();
      expect((await scriptCalls()) - beforeRelease).toBe(1 + 3);
      expect(acquired).toBe(3);
      await holder.getSemaphore('wakeN').release(2);
      await Promise.all(all);
      expect(await semaphore.availablePermits()).toBe(0);
    });

    it('wakes a waiter that wants fewer permits past one that wants more than came back', async () => {
      const holder = pool.make(fleet.url(0));
      const waiters = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
      const semaphore = waiters.getSemaphore('fit');
      const before = await scriptCalls();
      // Started together, both try, join the queue (the big one first) and try again.
      const big = semaphore.acquire(5, { waitMs: 20_000 });
      let small = false;
      const smallOne = semaphore.acquire(2).then(() => (small = true));
      expect(await callsReach(before, 4)).toBe(true);
      const started = performance.now();
      await holder.getSemaphore('fit').release(2);
      await smallOne;
      expect(small).toBe(true);
      expect(performance.now() - started).toBeLessThan(1_000);
      await holder.getSemaphore('fit').release(5);
      await big;
    });

    it('rejects waiters with ClientClosedError on close', async () => {
      const client = pool.make(fleet.url(0));
      const before = await scriptCalls();
      const outcome = expect(client.getSemaphore('close').acquire()).rejects.toBeInstanceOf(ClientClosedError);
      expect(await callsReach(before, 2)).toBe(true);
      await client.close();
      await outcome;
    });
  });

  describe('hand-off between tasks of one client', () => {
    it('hands a released permit to a waiting task of the same client without a script call', async () => {
      const client = pool.make(fleet.url(0));
      const semaphore = client.getSemaphore('local');
      await semaphore.trySetPermits(1);
      await semaphore.acquire();
      const before = await scriptCalls();
      let acquired = false;
      const waiting = semaphore.acquire().then(() => (acquired = true));
      expect(await callsReach(before, 2)).toBe(true); // its try, and the try after the subscription
      await semaphore.release();
      await waiting;
      expect(acquired).toBe(true);
      expect((await scriptCalls()) - before).toBe(2); // the hand-off itself sent nothing
      expect(await semaphore.availablePermits()).toBe(0);
      await semaphore.release();
      expect(await semaphore.availablePermits()).toBe(1);
    });

    it('sends the next release back through Redis, not to its own waiter, once another client announced a need', async () => {
      const busy = pool.make(fleet.url(0));
      const other = pool.make(fleet.url(0), { keyPrefix: busy.options.keyPrefix });
      const semaphore = busy.getSemaphore('need');
      await semaphore.trySetPermits(1);
      await semaphore.acquire();
      const listener = fleet.client(0).duplicate();
      const messages: string[] = [];
      listener.on('message', (_channel: string, message: string) => messages.push(message));
      await listener.subscribe(`${busy.options.keyPrefix}:{need}:permits`);
      try {
        // A task of the busy client waits: a release would be handed to it, without a Redis call.
        const before = await scriptCalls();
        const local = semaphore.acquire({ waitMs: 5_000 });
        expect(await callsReach(before, 2)).toBe(true);
        // The other client's waiter holds nothing: after a short wait it says so.
        const theirs = other.getSemaphore('need').acquire({ waitMs: 5_000 });
        expect(await eventually(() => messages.includes(`need:${other.clientId}`), 5_000)).toBe(true);
        const calls = await scriptCalls();
        await semaphore.release();
        // Owed to the other client: the permit went back through Redis (a release script, and its announcement).
        expect((await scriptCalls()) - calls).toBeGreaterThanOrEqual(1);
        expect(await eventually(() => messages.some((message) => /^1:\d+$/.test(message)), 5_000)).toBe(true);
        // Both are served in turn, whoever won the permit first.
        const first = await Promise.race([theirs.then(() => other.getSemaphore('need')), local.then(() => semaphore)]);
        await first.release();
        await Promise.all([theirs, local]);
      } finally {
        await listener.quit();
      }
    });

    it('announces a need less often while no permit comes back through Redis, and often again once one does', async () => {
      const holder = pool.make(fleet.url(0));
      const other = pool.make(fleet.url(0), { keyPrefix: holder.options.keyPrefix });
      await holder.getSemaphore('backoff').trySetPermits(1);
      await holder.getSemaphore('backoff').acquire();
      const listener = fleet.client(0).duplicate();
      const needs: number[] = [];
      listener.on('message', (_channel: string, message: string) => {
        if (message === `need:${other.clientId}`) needs.push(performance.now());
      });
      await listener.subscribe(`${holder.options.keyPrefix}:{backoff}:permits`);
      try {
        // Two calls wait while the one permit is held: announcing cannot free it, so the needs thin out
        // (each at least twice as long after the one before, up to 1 s), not one every 10 ms.
        const first = other.getSemaphore('backoff').acquire({ waitMs: 20_000 });
        const second = other.getSemaphore('backoff').acquire({ waitMs: 20_000 });
        expect(await eventually(() => needs.length >= 7, 10_000)).toBe(true);
        const gaps = needs.slice(1).map((at, i) => at - needs[i]!);
        expect(gaps.slice(3).every((gap) => gap >= 70)).toBe(true);
        // The 7th announcement set the interval to 1 s. A permit that comes back through Redis resets it: the
        // call still waiting announces again long before that second is up.
        const announced = needs.length;
        const lastNeed = needs[announced - 1]!;
        await holder.getSemaphore('backoff').release();
        await first;
        expect(await eventually(() => needs.length > announced, 5_000)).toBe(true);
        expect(needs[announced]! - lastNeed).toBeLessThan(900);
        await other.getSemaphore('backoff').release();
        await second;
        await other.getSemaphore('backoff').release();
      } finally {
        await listener.quit();
      }
    });

    it('sends a release back through Redis after a bounded chain of hand-offs whose critical sections never wait for I/O', async () => {
      const busy = pool.make(fleet.url(0));
      const other = pool.make(fleet.url(0), { keyPrefix: busy.options.keyPrefix });
      const semaphore = busy.getSemaphore('chain');
      await semaphore.trySetPermits(1);
      let stop = false;
      let rounds = 0;
      // Three tasks pass the only permit with nothing in between: the chain runs
      // in microtasks, so no message (no announced need) is read while it lasts.
      const loops = Array.from({ length: 3 }, async () => {
        while (!stop) {
          await semaphore.acquire();
          rounds++;
          await semaphore.release();
        }
      });
      try {
        expect(await eventually(() => rounds > 20, 5_000)).toBe(true);
        const started = rounds;
        await other.getSemaphore('chain').acquire({ waitMs: 5_000 });
        // Served while the chain goes on, within a few backstop streaks (255 hand-offs or 50 ms each).
        expect(stop).toBe(false);
        expect(rounds - started).toBeLessThan(4 * 256);
      } finally {
        stop = true;
        await other.getSemaphore('chain').release();
        await Promise.all(loops);
      }
      expect(await semaphore.availablePermits()).toBe(1);
    });

    it('gives a permit handed to a waiter back to Redis when the client closes before the waiter took it', async () => {
      const client = pool.make(fleet.url(0));
      const observer = pool.make(fleet.url(0), { keyPrefix: client.options.keyPrefix });
      const semaphore = client.getSemaphore('closing');
      await semaphore.trySetPermits(1);
      await semaphore.acquire();
      const before = await scriptCalls();
      const waiting = semaphore.acquire();
      const outcome = waiting.then(
        () => 'acquired',
        (error: unknown) => (error instanceof ClientClosedError ? 'closed' : String(error)),
      );
      expect(await callsReach(before, 2)).toBe(true);
      // The release hands the permit to the waiter; the close, in the same
      // turn, ends the waiter before it takes it.
      const released = semaphore.release();
      const closed = client.close();
      await released;
      await closed;
      expect(await outcome).toBe('closed');
      expect(await observer.getSemaphore('closing').availablePermits()).toBe(1);
    });
  });

  describe('across processes', () => {
    it('never lets more holders in than there are permits (4 processes × 4 tasks, 3 permits)', async () => {
      const prefix = uniquePrefix();
      const setup = pool.make(fleet.url(0), { keyPrefix: prefix });
      await setup.getSemaphore('pool').trySetPermits(3);
      const workers = 4;
      const tasks = 4;
      const rounds = 25;
      await Promise.all(
        Array.from({ length: workers }, (_, i) =>
          runChild(fixture('semaphore-worker.mjs'), {
            REDIS_URL: fleet.url(0),
            PREFIX: prefix,
            KIND: 'semaphore',
            TASKS: String(tasks),
            ROUNDS: String(rounds),
            PERMITS: '3',
            WORKER: String(i),
          }),
        ),
      );
      const redis = fleet.client(0);
      expect(Number(await redis.get(`${prefix}:data:total`))).toBe(workers * tasks * rounds);
      expect(Number((await redis.get(`${prefix}:data:overflows`)) ?? 0)).toBe(0);
      const max = Number(await redis.get(`${prefix}:data:max`));
      expect(max).toBeGreaterThan(1); // the permits were shared
      expect(max).toBeLessThanOrEqual(3);
      expect(await setup.getSemaphore('pool').availablePermits()).toBe(3);
    });

    it("does not give a SIGKILLed holder's permit back (documented: use the permit-expirable semaphore)", async () => {
      const prefix = uniquePrefix();
      const client: RLockClient = pool.make(fleet.url(0), { keyPrefix: prefix });
      const semaphore = client.getSemaphore('pool');
      await semaphore.trySetPermits(1);
      const holder = startChild(fixture('permit-holder.mjs'), { REDIS_URL: fleet.url(0), PREFIX: prefix, KIND: 'semaphore' });
      await holder.line(/^acquired/);
      holder.process.kill('SIGKILL');
      expect(await holder.exited).toBeNull();
      expect(await semaphore.tryAcquire({ waitMs: 500 })).toBe(false);
      expect(await semaphore.availablePermits()).toBe(0);
      // The way back: someone adds the lost permit.
      await semaphore.addPermits(1);
      expect(await semaphore.tryAcquire()).toBe(true);
    });
  });
});
