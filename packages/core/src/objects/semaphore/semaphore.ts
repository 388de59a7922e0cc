import { acquireOrWait, type TryOutcome } from '../../engine/acquire.js';
import type { EngineContext } from '../../engine/engine-context.js';
import { Hold, type HoldObserver, type HoldTarget } from '../../engine/hold.js';
import { monotonicNow } from '../../connection/time.js';
import { wasNotSent } from '../../connection/transport.js';
import type { WaitQueue } from '../../engine/wait-queue.js';
import { ClientClosedError, LockAcquireTimeoutError, RedisUnavailableError } from '../../errors.js';
import { checkCount } from '../../checks/count-checks.js';
import { parseWaitOptions, type WaitOptions, type WaitRequest } from '../wait-options.js';
import { opMarker, semaphoreKeys, type SemaphoreKeys } from './keys.js';
import { needAnnouncer, type NeedAnnouncer } from './need-announcer.js';
import { NEED_PREFIX, type SemaphoreStore } from './semaphore-store.js';
import type { RSemaphore } from './types.js';
import { waiterId, wakeFitting, wantedBy } from './wake-fitting.js';

/**
 * A grant of permits is not a hold (nothing is owned, leased or renewed), but
 * the engine's wait loop hands grants over as holds: this observer makes the
 * carrier inert (it is never registered, renewed or reported).
 */
const INERT: HoldObserver = {
  startRenewal: () => undefined,
  stopRenewal: () => undefined,
  lost: () => undefined,
  watchesLosses: () => false,
};

/** Waiting calls of this process, numbered for their waiter ids. */
let calls = 0;

/**
 * How many releases in a row a client may hand to its own waiting tasks
 * before the next one goes back through Redis all the same (clients of older
 * versions announce no need), and how long (ms) it may go on handing them
 * over while its event loop does not turn: a chain of hand-offs whose
 * critical sections never wait for I/O runs in microtasks and reads no
 * message, so a need another client announced is heard only when it breaks.
 * A chain whose critical sections wait for I/O lets the loop turn and is
 * bounded by announcements instead.
 */
const MAX_LOCAL_STREAK = 255;
const MAX_DEAF_MS = 50;

/**
 * How long a client whose release went back through Redis while other
 * clients listened holds back its own waiters (ms): its event loop is awake,
 * so without this it would win the permit back far more often than its share
 * (the lock's hand-off yield, see WaitQueue.yieldFor).
 */
const HANDOFF_YIELD_MS = 2;

/**
 * Permits a releasing task handed straight to a waiting task of the same
 * client (no Redis call: the count in Redis has them taken already), by the
 * waiter's id (unique in the process), until the waiter takes them. Entries
 * live only while their call does.
 */
const handedByContext = new WeakMap<EngineContext, Map<string, number>>();

function handedPermits(ctx: EngineContext): Map<string, number> {
  let handed = handedByContext.get(ctx);
  if (!handed) {
    handed = new Map();
    handedByContext.set(ctx, handed);
  }
  return handed;
}

/**
 * What keeps one client's hand-offs from starving other clients, per wait
 * queue (one per semaphore with local waiters; it goes when they do, and so
 * does this).
 */
interface Turns {
  /** Releases handed to local waiters since permits last went back through Redis. */
  streak: number;
  /** When this client's event loop last turned during the streak (monotonic ms), and whether a check is scheduled. */
  turnedAt: number;
  turnCheck: boolean;
  /** Another client announced a need: the next release goes back through Redis. */
  owed: boolean;
  /** Until then (monotonic ms) a message wakes no local waiter: other clients' waiters go first. */
  yieldUntil: number;
  yieldTimer: NodeJS.Timeout | undefined;
  /** Messages heard while yielding: the permits that came back, summed, and the latest available count. */
  heldBack: { cameBack: number; available: number };
}

const turnsByQueue = new WeakMap<WaitQueue, Turns>();

/** Notes the next turn of the event loop on `turns` (one check scheduled at a time). */
function watchTurn(turns: Turns): void {
  if (turns.turnCheck) return;
  turns.turnCheck = true;
  setImmediate(() => {
    turns.turnCheck = false;
    turns.turnedAt = monotonicNow();
  });
}

function turnsOf(queue: WaitQueue): Turns {
  let turns = turnsByQueue.get(queue);
  if (!turns) {
    turns = { streak: 0, turnedAt: 0, turnCheck: false, owed: false, yieldUntil: 0, yieldTimer: undefined, heldBack: { cameBack: 0, available: 0 } };
    turnsByQueue.set(queue, turns);
  }
  return turns;
}

/**
 * The semaphore (Redisson's RSemaphore) on the engine: see {@link RSemaphore}.
 * Its waiting is the engine's (one try, subscribe, try again, sleep until a
 * release message or the capped sleep); its protocol is {@link SemaphoreStore}.
 */
export class RedisSemaphore implements RSemaphore {
  readonly keys: SemaphoreKeys;
  /** Permits handed to this client's waiting calls, by waiter id. */
  private readonly handed: Map<string, number>;
  /** This client's announcer of needs (shared by its semaphores). */
  private readonly needs: NeedAnnouncer;
  private readonly onMessage: (payload: string, queue: WaitQueue) => void;

  constructor(
    readonly name: string,
    private readonly ctx: EngineContext,
    private readonly store: SemaphoreStore,
  ) {
    this.keys = semaphoreKeys(ctx.keyPrefix, name);
    this.handed = handedPermits(ctx);
    this.needs = needAnnouncer(ctx, store);
    this.onMessage = (payload, queue) => this.heard(payload, queue);
  }

  async trySetPermits(permits: number): Promise<boolean> {
    const checked = checkCount(permits, 'trySetPermits(): permits');
    this.ctx.assertOpen();
    return this.store.trySetPermits(this.keys, this.newMarker(), checked);
  }

  async addPermits(delta: number): Promise<number> {
    const checked = checkCount(delta, 'addPermits(): delta', true);
    this.ctx.assertOpen();
    return this.store.addPermits(this.keys, this.newMarker(), checked);
  }

  acquire(options?: WaitOptions): Promise<void>;
  acquire(permits: number, options?: WaitOptions): Promise<void>;
  async acquire(first?: number | WaitOptions, second?: WaitOptions): Promise<void> {
    const { permits, request } = readArguments(first, second, 'acquire');
    if (!(await this.acquireChecked(permits, request))) throw new LockAcquireTimeoutError(this.name, request.waitMs ?? 0);
  }

  tryAcquire(options?: WaitOptions): Promise<boolean>;
  tryAcquire(permits: number, options?: WaitOptions): Promise<boolean>;
  async tryAcquire(first?: number | WaitOptions, second?: WaitOptions): Promise<boolean> {
    const { permits, request } = readArguments(first, second, 'tryAcquire');
    try {
      return await this.acquireChecked(permits, { ...request, waitMs: request.waitMs ?? 0 });
    } catch (error) {
      // Not refused but unanswered: the failure, not a false that would hide it.
      if (error instanceof LockAcquireTimeoutError && error.cause) throw error.cause;
      throw error;
    }
  }

  async release(permits: number = 1): Promise<void> {
    const checked = checkCount(permits, 'release(): permits');
    this.ctx.assertOpen();
    this.needs.countHeld(this.keys, -checked);
    await this.giveBack(checked);
  }

  async availablePermits(): Promise<number> {
    this.ctx.assertOpen();
    return this.store.available(this.keys);
  }

  async drainPermits(): Promise<number> {
    this.ctx.assertOpen();
    return this.store.drainPermits(this.keys, this.newMarker());
  }

  // ---- acquisition -------------------------------------------------------

  /** The engine's wait loop with the semaphore's try and wake policy; true when acquired. */
  private async acquireChecked(permits: number, request: WaitRequest): Promise<boolean> {
    const { ctx } = this;
    ctx.assertOpen();
    request.signal?.throwIfAborted();
    const id = waiterId(++calls, permits);
    // A call that does not wait has no need to announce.
    const watched = request.waitMs !== 0;
    if (watched) this.needs.begin(this.keys, id);
    let hold;
    try {
      hold = await acquireOrWait(ctx, {
        name: this.name,
        channel: this.keys.channel,
        id,
        headOnly: false,
        queueLocally: true,
        onMessage: this.onMessage,
        reentry: false,
        waitMs: request.waitMs,
        signal: request.signal,
        tryOnce: (signal) => this.tryOnce(id, permits, signal),
        // Granted just as the caller gave up: nobody will release them, so they go back now.
        giveBack: () => this.giveBack(permits),
      });
    } finally {
      if (watched) this.needs.end(this.keys, id);
      // Permits a local release handed to this call that it did not take
      // (it timed out, aborted, was closed, or took others from Redis): on
      // to the next local waiter, or back to Redis.
      const unused = this.handed.get(id);
      if (unused !== undefined) {
        this.handed.delete(id);
        const work = this.giveBack(unused).catch((error: unknown) => ctx.backgroundError(error));
        ctx.background.track(work);
      }
    }
    if (hold === undefined) return false;
    this.needs.countHeld(this.keys, permits);
    return true;
  }


  // ---- release: to a local waiter, or back to Redis -------------------------

  /**
   * Gives `permits` back: first to this client's own waiting tasks (in
   * arrival order, each as many as it wants), with no Redis call at all, since
   * the count in Redis has them taken already; the rest, the first release
   * after another client announced a need, and the first after
   * MAX_LOCAL_STREAK hand-offs in a row or MAX_DEAF_MS of them without a turn
   * of the event loop, back through Redis, where every client's waiters are woken. Then, when other clients listened, this
   * client's own waiters hold back for a moment so one of theirs wins.
   */
  private async giveBack(permits: number): Promise<void> {
    const { handed, ctx, keys } = this;
    let rest = permits;
    const queue = ctx.queues.get(keys.channel);
    const turns = queue && turnsOf(queue);
    const now = monotonicNow();
    const streakOpen = turns !== undefined && (turns.streak === 0 || (turns.streak < MAX_LOCAL_STREAK && now - turns.turnedAt < MAX_DEAF_MS));
    if (queue && turns && streakOpen && !turns.owed && !ctx.closed) {
      for (const waiter of queue.waiters) {
        if (handed.has(waiter.id)) continue;
        const wanted = wantedBy(waiter.id);
        if (wanted > rest) continue;
        handed.set(waiter.id, wanted);
        queue.wakeId(waiter.id);
        rest -= wanted;
        if (rest === 0) break;
      }
      if (rest < permits) {
        if (turns.streak++ === 0) turns.turnedAt = now;
        watchTurn(turns);
      }
    }
    if (rest === 0) return;
    if (turns) {
      turns.streak = 0;
      turns.owed = false;
    }
    const reply = await this.store.release(keys, this.newMarker(), rest);
    if (turns && reply.receivers > 1 && queue.waiters.length > 0) turns.yieldUntil = monotonicNow() + HANDOFF_YIELD_MS;
  }

  /** A message on the channel: wake the local waiters it can serve, after this client's yield. */
  private heard(payload: string, queue: WaitQueue): void {
    const { handed } = this;
    const turns = turnsOf(queue);
    if (payload.startsWith(NEED_PREFIX)) {
      if (payload.slice(NEED_PREFIX.length) !== this.ctx.clientId) turns.owed = true;
      return;
    }
    const served = (id: string): boolean => handed.has(id);
    const waitMs = turns.yieldUntil - monotonicNow();
    if (waitMs <= 0 && !turns.yieldTimer) {
      wakeFitting(payload, queue, served);
      return;
    }
    // Yielding: what the messages gave back is woken for once the yield is over.
    const colon = payload.indexOf(':');
    turns.heldBack.cameBack += Number(payload.slice(0, colon));
    turns.heldBack.available = Number(payload.slice(colon + 1));
    if (turns.yieldTimer) return;
    turns.yieldTimer = setTimeout(() => {
      turns.yieldTimer = undefined;
      const { cameBack, available } = turns.heldBack;
      turns.heldBack = { cameBack: 0, available: 0 };
      wakeFitting(`${cameBack}:${available}`, queue, served);
    }, Math.max(1, Math.ceil(waitMs)));
    turns.yieldTimer.unref();
  }


  /**
   * One acquire script call, with what the engine's `attempt` gives a hold,
   * minus the lease: an operation id (its marker), and an undo when the
   * caller aborted, the client closed, or no answer came (the call may still
   * run: the undo goes out behind it on the same connection and leaves a
   * tombstone). Permits do not expire, so a late grant is still a grant.
   */
  private async tryOnce(id: string, permits: number, signal: AbortSignal | undefined): Promise<TryOutcome> {
    const { ctx, store, keys } = this;
    ctx.assertOpen();
    signal?.throwIfAborted();
    // Handed over by a local release: taken without a Redis call.
    if (this.handed.get(id) === permits) {
      this.handed.delete(id);
      return { hold: this.carrier(permits) };
    }
    const marker = this.newMarker();
    const undo = (): Promise<void> => {
      const work = store.cancel(keys, marker, permits).then(
        () => undefined,
        (error: unknown) => ctx.backgroundError(error),
      );
      ctx.background.track(work);
      return work;
    };
    // A turn of its own (the marker is unique): close() waits for the try and
    // for the undo it may send, so a grant that lands during close goes back.
    ctx.chains.enter(keys.permits, marker);
    try {
      let reply;
      try {
        reply = await store.acquire(keys, marker, permits);
      } catch (error) {
        if (error instanceof RedisUnavailableError && !wasNotSent(error)) void undo();
        throw error;
      }
      // Refused: nothing to time a retry by (permits come back only when
      // someone releases), so the waiter sleeps until a message or the capped sleep.
      if (reply === 'refused') return { retryInMs: -1 };
      if (reply === 'cancelled') return { retryInMs: 0 };
      if (!signal?.aborted && !ctx.closed) return { hold: this.carrier(permits) };
      await undo();
    } finally {
      ctx.chains.leave(keys.permits, marker);
    }
    signal?.throwIfAborted();
    throw new ClientClosedError();
  }

  /** The inert hold that carries a grant through the engine's wait loop. */
  private carrier(permits: number): Hold<number> {
    const target: HoldTarget = { name: this.name, key: this.keys.permits, mode: 'permits', kind: 'semaphore', owner: '', exclusive: false, driftFactor: 0 };
    return new Hold<number>(target, undefined, this.ctx.watchdogTimeoutMs, INERT, permits);
  }

  private newMarker(): string {
    return opMarker(this.keys, this.ctx.clientId, this.ctx.newOpId());
  }
}

/** `(permits?, options?)` or `(options?)`: checked before anything is sent. */
function readArguments(first: unknown, second: unknown, call: string): { permits: number; request: WaitRequest } {
  if (first !== null && typeof first === 'object' && second === undefined) {
    return { permits: 1, request: parseWaitOptions(first, call) };
  }
  const permits = first === undefined ? 1 : checkCount(first, `${call}(): permits`);
  return { permits, request: parseWaitOptions(second, call) };
}
