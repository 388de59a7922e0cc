import { jest } from '@jest/globals';
import { ARRIVALS_PER_TURN, WaitQueue, WaitQueues, Waiter } from '../../src/engine/wait-queue.js';

describe('WaitQueue', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const queueOf = (headOnly = false) => new WaitQueue('c', headOnly, (_payload, queue) => (queue.released(), true));

  function sleeper(queue: WaitQueue, id = 'o'): { waiter: Waiter; woke: () => string | undefined } {
    const waiter = new Waiter(queue, id);
    queue.waiters.push(waiter);
    let reason: string | undefined;
    void waiter.sleep(60_000, undefined).then((r) => (reason = r));
    return { waiter, woke: () => reason };
  }

  describe('released (wake one)', () => {
    it('wakes only the longest-waiting sleeper', async () => {
      const queue = queueOf();
      const first = sleeper(queue);
      const second = sleeper(queue);
      queue.released();
      await Promise.resolve();
      expect(first.woke()).toBe('released');
      expect(second.woke()).toBeUndefined();
    });

    it('keeps a wake for a waiter that was busy trying, so its next sleep returns at once', async () => {
      const queue = queueOf();
      const busy = new Waiter(queue, 'o');
      queue.waiters.push(busy);
      queue.released();
      await expect(busy.sleep(60_000, undefined)).resolves.toBe('released');
    });

    it('holds back the local wake while this client yields its turn after its own release', async () => {
      const queue = queueOf();
      const local = sleeper(queue);
      queue.yieldFor(2);
      queue.released();
      await Promise.resolve();
      expect(local.woke()).toBeUndefined();
      await jest.advanceTimersByTimeAsync(3);
      expect(local.woke()).toBe('released');
    });
  });

  describe('a wake meant for this client alone (unheard)', () => {
    const queuesOf = () => new WaitQueues(() => ({ ready: Promise.resolve(), close: () => undefined }));
    const spec = { channel: 'c', headOnly: false, onMessage: () => true };

    it('passes on a wake that comes when no waiter is left', () => {
      const queue = queueOf();
      const passed: string[] = [];
      queue.unheard = () => passed.push('passed');
      queue.released();
      expect(passed).toEqual(['passed']);
      sleeper(queue);
      queue.released();
      expect(passed).toEqual(['passed']);
    });

    it('passes on the wake of a woken waiter that leaves without the lock when no other waiter is here', async () => {
      const queues = queuesOf();
      const waiter = await queues.join({ ...spec, id: 'a' });
      const passed: string[] = [];
      waiter.queue.unheard = () => passed.push('passed');
      const woke = waiter.sleep(60_000, undefined);
      waiter.queue.released();
      await expect(woke).resolves.toBe('released');
      queues.leave(waiter, false);
      expect(passed).toEqual(['passed']);
    });

    it('passes on a wake kept for the last waiter, busy trying, when it leaves without the lock; not when it acquired', async () => {
      const queues = queuesOf();
      const gaveUp = await queues.join({ ...spec, id: 'a' });
      const passed: string[] = [];
      gaveUp.queue.unheard = () => passed.push('passed');
      gaveUp.queue.released();
      queues.leave(gaveUp, false);
      expect(passed).toEqual(['passed']);
      const acquirer = await queues.join({ ...spec, id: 'b' });
      acquirer.queue.unheard = () => passed.push('passed again');
      acquirer.queue.released();
      queues.leave(acquirer, true);
      expect(passed).toEqual(['passed']);
    });

    it('gives the wake to the next local waiter first', async () => {
      const queues = queuesOf();
      const first = await queues.join({ ...spec, id: 'a' });
      const second = await queues.join({ ...spec, id: 'b' });
      const passed: string[] = [];
      first.queue.unheard = () => passed.push('passed');
      const firstWoke = first.sleep(60_000, undefined);
      const secondWoke = second.sleep(60_000, undefined);
      first.queue.released();
      await expect(firstWoke).resolves.toBe('released');
      queues.leave(first, false);
      await expect(secondWoke).resolves.toBe('released');
      expect(passed).toEqual([]);
    });
  });

  describe('arrivals that queue others behind their first try', () => {
    it('counts as waiters while the try is out, and a failed try wakes one waiter that queued behind it', async () => {
      const queues = new WaitQueues(() => ({ ready: Promise.resolve(), close: () => undefined }));
      expect(queues.hasWaiters('c')).toBe(false);
      queues.arrive('c');
      queues.arrive('c');
      expect(queues.hasWaiters('c')).toBe(true);
      const behind = await queues.join({ channel: 'c', id: 'b', headOnly: false, onMessage: () => true });
      const woke = behind.sleep(60_000, undefined);
      queues.arrived('c', false);
      queues.arrived('c', true);
      await expect(woke).resolves.toBe('released');
      queues.leave(behind, true);
      expect(queues.hasWaiters('c')).toBe(false);
    });

    it('lets the arrival whose try was refused join ahead of those that queued behind it', async () => {
      const queues = new WaitQueues(() => ({ ready: Promise.resolve(), close: () => undefined }));
      const spec = { channel: 'c', headOnly: false, onMessage: () => true };
      const later = await queues.join({ ...spec, id: 'later' });
      const first = await queues.join({ ...spec, id: 'first' }, undefined, true);
      expect(first.queue.waiters.map((waiter) => waiter.id)).toEqual(['first', 'later']);
      expect(later.isHead).toBe(false);
    });
  });

  describe('wake policies', () => {
    it('wakeN wakes n sleepers in arrival order and keeps the rest of the wakes for busy waiters', async () => {
      const queue = queueOf();
      const sleepers = [sleeper(queue), sleeper(queue), sleeper(queue)];
      queue.wakeN(2);
      await Promise.resolve();
      expect(sleepers.map((s) => s.woke())).toEqual(['released', 'released', undefined]);
    });

    it('wakeId wakes the waiter it names, wherever it stands', async () => {
      const queue = queueOf();
      const first = sleeper(queue, 'a');
      const second = sleeper(queue, 'b');
      queue.wakeId('b');
      await Promise.resolve();
      expect([first.woke(), second.woke()]).toEqual([undefined, 'released']);
    });

    it('handTo wakes the sleeper it names with the grant; one busy trying gets only a wake, and no grant', async () => {
      const queue = queueOf();
      const other = sleeper(queue, 'a');
      const named = sleeper(queue, 'b');
      queue.handTo('b', 'grant');
      await Promise.resolve();
      expect([other.woke(), named.woke()]).toEqual([undefined, 'released']);
      expect([other.waiter.handOff, named.waiter.handOff]).toEqual([undefined, 'grant']);
      const busy = new Waiter(queue, 'c');
      queue.waiters.push(busy);
      queue.handTo('c', 'grant');
      expect(busy.handOff).toBeUndefined();
      await expect(busy.sleep(60_000, undefined)).resolves.toBe('released');
    });

    it('wakeAll wakes every sleeper with the reason given', async () => {
      const queue = queueOf();
      const sleepers = [sleeper(queue), sleeper(queue)];
      queue.wakeAll('resubscribed');
      await Promise.resolve();
      expect(sleepers.map((s) => s.woke())).toEqual(['resubscribed', 'resubscribed']);
    });

    it('in a head-only queue wakes the head only, and keeps the wake for it when it is busy', async () => {
      const queue = queueOf(true);
      const head = new Waiter(queue, 'h');
      queue.waiters.push(head); // busy trying
      const next = sleeper(queue, 'n');
      queue.wakeOne();
      await Promise.resolve();
      expect(next.woke()).toBeUndefined();
      await expect(head.sleep(60_000, undefined)).resolves.toBe('released');
    });
  });
});

describe('WaitQueues', () => {
  /** A deferred call without waitMs or signal. */
  const unbounded = { deadline: Number.POSITIVE_INFINITY, callerSignal: undefined };

  it('subscribes a channel once for its first waiter and closes the subscription with its last', async () => {
    const log: string[] = [];
    const queues = new WaitQueues((queue) => {
      log.push(`subscribe ${queue.channel}`);
      return { ready: Promise.resolve(), close: () => log.push(`close ${queue.channel}`) };
    });
    const spec = { channel: 'c', headOnly: false, onMessage: () => true };
    const a = await queues.join({ ...spec, id: 'a' });
    const b = await queues.join({ ...spec, id: 'b' });
    expect(queues.hasWaiters('c')).toBe(true);
    queues.leave(a, false);
    queues.leave(b, false);
    await Promise.resolve();
    expect(log).toEqual(['subscribe c', 'close c']);
    expect(queues.hasWaiters('c')).toBe(false);
  });

  it('gives the turn to the next waiter when the head of a head-only queue leaves', async () => {
    const queues = new WaitQueues(() => ({ ready: Promise.resolve(), close: () => undefined }));
    const spec = { channel: 'c', headOnly: true, onMessage: () => true };
    const head = await queues.join({ ...spec, id: 'a' });
    const next = await queues.join({ ...spec, id: 'b' });
    const turn = next.sleep(Number.POSITIVE_INFINITY, undefined);
    queues.leave(head, true);
    await expect(turn).resolves.toBe('turn');
    expect(next.isHead).toBe(true);
  });

  it('passes a wake by id, kept while its waiter was trying, to a branch with the same id when that waiter leaves without the lock', async () => {
    const queues = new WaitQueues(() => ({ ready: Promise.resolve(), close: () => undefined }));
    const spec = { channel: 'c', id: 'task', headOnly: false, onMessage: () => true };
    const trying = await queues.join(spec);
    const branch = await queues.join(spec);
    const woke = branch.sleep(60_000, undefined);
    // The hand-off names the task; the first waiter with its id is busy trying: kept for it.
    trying.queue.wakeId('task');
    // It gives up before it sleeps again: the branch wakes now, not at its timer.
    queues.leave(trying, false);
    await expect(woke).resolves.toBe('released');
  });

  it('forgets a wake kept for an id once no waiter with it is left', async () => {
    const queues = new WaitQueues(() => ({ ready: Promise.resolve(), close: () => undefined }));
    const waiter = await queues.join({ channel: 'c', id: 'a', headOnly: false, onMessage: () => true });
    const queue = waiter.queue;
    queue.wakeId('a');
    queues.leave(waiter, false);
    const later = await queues.join({ channel: 'c', id: 'a', headOnly: false, onMessage: () => true });
    // A new call with the same id does not inherit the old wake: it sleeps until woken.
    const slept = later.sleep(1, undefined);
    await expect(slept).resolves.toBe('timeout');
  });

  it("wakes the sleeping branches of the acquirer's task, and walks no queue for a waiter whose id no other has", async () => {
    const queues = new WaitQueues(() => ({ ready: Promise.resolve(), close: () => undefined }));
    const spec = { channel: 'c', headOnly: false, onMessage: () => true };
    const acquirer = await queues.join({ ...spec, id: 'task' });
    const branch = await queues.join({ ...spec, id: 'task' });
    const lone = await queues.join({ ...spec, id: 'other' });
    const others = await Promise.all(Array.from({ length: 1_000 }, (_, i) => queues.join({ ...spec, id: `o${i}` })));
    const branchWoke = branch.sleep(60_000, undefined);
    let walks = 0;
    const waiters = acquirer.queue.waiters;
    const values = waiters.values.bind(waiters);
    waiters[Symbol.iterator] = () => {
      walks++;
      return values();
    };
    queues.wakeSiblings(lone);
    expect(walks).toBe(0);
    queues.wakeSiblings(acquirer);
    expect(walks).toBe(1);
    await expect(branchWoke).resolves.toBe('released');
    for (const waiter of [acquirer, branch, lone, ...others]) queues.leave(waiter, false);
  });

  it('lets a call queued behind waiters set out at once, up to ARRIVALS_PER_TURN a turn and never ahead of a deferred one', async () => {
    const queues = new WaitQueues(() => ({ ready: Promise.resolve(), close: () => undefined }));
    const now = Array.from({ length: ARRIVALS_PER_TURN + 1 }, () => queues.setsOutNow('c'));
    // A contended call costs no extra turn; past the turn's share, the rest are deferred.
    expect(now.filter(Boolean)).toHaveLength(ARRIVALS_PER_TURN);
    expect(now.at(-1)).toBe(false);
    const setOut: string[] = [];
    void queues.later('c', unbounded).then(() => setOut.push('deferred'));
    await new Promise((resolve) => setImmediate(resolve));
    // The turn that set out ARRIVALS_PER_TURN at once had no room left: the deferred call goes next turn, and a
    // newcomer meanwhile queues behind it.
    expect(setOut).toEqual([]);
    expect(queues.setsOutNow('c')).toBe(false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(setOut).toEqual(['deferred']);
    expect(queues.setsOutNow('c')).toBe(true);
  });

  it('defers a call queued behind waiters whose SUBSCRIBE is pending: it could only wait for the acknowledgement', async () => {
    let acknowledge = (): void => undefined;
    const queues = new WaitQueues(() => ({ ready: new Promise<void>((resolve) => (acknowledge = resolve)), close: () => undefined }));
    const joined = queues.join({ channel: 'c', id: 'a', headOnly: false, onMessage: () => true });
    expect(queues.setsOutNow('c')).toBe(false);
    // Another channel's calls are not held back by it.
    expect(queues.setsOutNow('other')).toBe(true);
    acknowledge();
    const waiter = await joined;
    await new Promise((resolve) => setImmediate(resolve));
    expect(queues.setsOutNow('c')).toBe(true);
    queues.leave(waiter, false);
  });

  it('lets calls deferred behind the waiters of a channel set out in order, at most ARRIVALS_PER_TURN a turn, counted as waiters until then', async () => {
    const queues = new WaitQueues(() => ({ ready: Promise.resolve(), close: () => undefined }));
    const setOut: number[] = [];
    const calls = 2 * ARRIVALS_PER_TURN + 3;
    for (let i = 0; i < calls; i++) void queues.later('c', unbounded).then(() => setOut.push(i));
    expect([queues.hasWaiters('c'), queues.hasJoined('c'), setOut.length]).toEqual([true, false, 0]);
    const perTurn: number[] = [];
    while (setOut.length < calls) {
      const before = setOut.length;
      await new Promise((resolve) => setImmediate(resolve));
      perTurn.push(setOut.length - before);
    }
    expect(perTurn).toEqual([ARRIVALS_PER_TURN, ARRIVALS_PER_TURN, 3]);
    expect(setOut).toEqual(Array.from({ length: calls }, (_, i) => i));
    expect(queues.hasWaiters('c')).toBe(false);
  });

  it('sets out a deferred call whose waitMs ran out, or whose caller aborted, ahead of those deferred before it', async () => {
    const queues = new WaitQueues(() => ({ ready: Promise.resolve(), close: () => undefined }));
    const setOut: string[] = [];
    for (let i = 0; i < 2 * ARRIVALS_PER_TURN; i++) void queues.later('c', unbounded).then(() => setOut.push('ahead'));
    void queues.later('c', { deadline: performance.now(), callerSignal: undefined }).then(() => setOut.push('out of time'));
    const controller = new AbortController();
    void queues.later('c', { deadline: Number.POSITIVE_INFINITY, callerSignal: controller.signal }).then(() => setOut.push('aborted'));
    controller.abort();
    await Promise.resolve();
    // Aborted: at once, with no turn ended.
    expect(setOut).toEqual(['aborted']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(setOut.slice(0, 2)).toEqual(['aborted', 'out of time']);
    expect(setOut).toHaveLength(2 + ARRIVALS_PER_TURN);
    await new Promise((resolve) => setImmediate(resolve));
    expect(setOut).toHaveLength(2 + 2 * ARRIVALS_PER_TURN);
    expect(queues.hasWaiters('c')).toBe(false);
  });

  it('counts a message its object does not recognise (or throws on) as dropped, and passes it on to nobody', async () => {
    const queues = new WaitQueues(() => ({ ready: Promise.resolve(), close: () => undefined }));
    const heard: string[] = [];
    const onMessage = (payload: string): boolean => {
      if (payload === 'boom') throw new Error('a bug in a wake policy');
      heard.push(payload);
      return payload === 'unlock';
    };
    const waiter = await queues.join({ channel: 'c', id: 'a', headOnly: false, onMessage });
    waiter.queue.hear('unlock');
    waiter.queue.hear('garbage');
    waiter.queue.hear('boom');
    expect(heard).toEqual(['unlock', 'garbage']);
    expect(queues.drops.count).toBe(2);
  });

  describe('the shared timed retry', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());
    const queuesOf = () => new WaitQueues(() => ({ ready: Promise.resolve(), close: () => undefined }));
    const spec = { channel: 'c', headOnly: false, onMessage: () => true };

    it('wakes one sharing waiter, the longest asleep, whatever the number waiting', async () => {
      const queues = queuesOf();
      const waiters = await Promise.all(Array.from({ length: 100 }, (_, i) => queues.join({ ...spec, id: `w${i}` })));
      const woke: string[] = [];
      for (const waiter of waiters) void waiter.sleep(Number.POSITIVE_INFINITY, undefined).then(() => woke.push(waiter.id));
      waiters[0]?.queue.retryIn(1_000);
      await jest.advanceTimersByTimeAsync(1_000);
      expect(woke).toEqual(['w0']);
      expect(waiters[0]?.timed).toBe(true);
    });

    it('leaves a waiter whose tries keep its place in Redis to its own timer', async () => {
      const queues = queuesOf();
      const keeper = await queues.join({ ...spec, id: 'keeper', keepsPlace: true });
      const sharer = await queues.join({ ...spec, id: 'sharer' });
      expect([keeper.sharesRetry, sharer.sharesRetry]).toEqual([false, true]);
      const woke: string[] = [];
      void keeper.sleep(Number.POSITIVE_INFINITY, undefined).then(() => woke.push('keeper'));
      void sharer.sleep(Number.POSITIVE_INFINITY, undefined).then(() => woke.push('sharer'));
      keeper.queue.retryIn(10);
      await jest.advanceTimersByTimeAsync(10);
      expect(woke).toEqual(['sharer']);
    });

    it('is handed to the next waiter at once when the one it woke leaves without the grant', async () => {
      const queues = queuesOf();
      const head = await queues.join({ ...spec, id: 'a' });
      const next = await queues.join({ ...spec, id: 'b' });
      const headWoke = head.sleep(Number.POSITIVE_INFINITY, undefined);
      const nextWoke = next.sleep(Number.POSITIVE_INFINITY, undefined);
      head.queue.retryIn(500);
      await jest.advanceTimersByTimeAsync(500);
      await expect(headWoke).resolves.toBe('timeout');
      // Its try is cut off (waitMs, abort): the timer is not armed, so the next tries now.
      queues.leave(head, false);
      await jest.advanceTimersByTimeAsync(1);
      await expect(nextWoke).resolves.toBe('timeout');
      expect(next.timed).toBe(true);
    });

    it('stops with the last waiter and at close', async () => {
      const queues = queuesOf();
      const only = await queues.join({ ...spec, id: 'a' });
      only.queue.retryIn(500);
      queues.leave(only, false);
      expect(only.queue.retryArmed).toBe(false);
      const another = await queues.join({ ...spec, id: 'b' });
      another.queue.retryIn(500);
      queues.close(new Error('closed'));
      expect(another.queue.retryArmed).toBe(false);
    });
  });

  it('rejects every waiter and later joins once closed', async () => {
    const queues = new WaitQueues(() => ({ ready: Promise.resolve(), close: () => undefined }));
    const waiter = await queues.join({ channel: 'c', id: 'a', headOnly: false, onMessage: () => true });
    const sleeping = waiter.sleep(60_000, undefined);
    queues.close(new Error('closed'));
    await expect(sleeping).resolves.toBe('timeout');
    expect(waiter.queue.closedError?.message).toBe('closed');
    await expect(queues.join({ channel: 'c', id: 'b', headOnly: false, onMessage: () => true })).rejects.toThrow('closed');
  });
});
