import { acquireObserved, unansweredFailure } from '../../engine/acquire.js';
import { attempt, type AttemptSpec, type TryOutcome } from '../../engine/attempt.js';
import type { EngineContext } from '../../engine/engine-context.js';
import { monotonicNow } from '../../connection/time.js';
import type { WaitQueue } from '../../engine/wait-queue.js';
import { LockAcquireTimeoutError } from '../../errors.js';
import { checkCount } from '../../checks/count-checks.js';
import { parseWaitOptions, type WaitOptions, type WaitRequest } from '../wait-options.js';
import { opMarker } from '../names.js';
import { PermitCount } from '../permit-count.js';
import { semaphoreKeys, type SemaphoreKeys } from './keys.js';
import { NeedAnnouncer } from './need-announcer.js';
import { NEED_PREFIX, type SemaphoreAcquireReply, type SemaphoreStore } from './semaphore-store.js';
import type { RSemaphore } from './types.js';
import { waiterId, wakeFitting, wantedBy } from './wake-fitting.js';
import { CLIENT_ID, readPermitCounts } from '../messages.js';

/** Bounds on a chain of local hand-offs: a count (older clients announce no need), and ms (a chain that never waits for I/O hears no need). */
const MAX_LOCAL_STREAK = 255;
const MAX_DEAF_MS = 50;

/** An acquisition's tries: a grant is the permits taken. */
type PermitTries = AttemptSpec<SemaphoreAcquireReply, number>;

/** What keeps one client's hand-offs on one semaphore from starving other clients. */
interface Turns {
  /** Releases handed to local waiters since permits last went through Redis. */
  streak: number;
  /** When the event loop last turned during the streak (monotonic ms), and whether a check is scheduled. */
  turnedAt: number;
  turnCheck: boolean;
  /** Another client announced a need: the next release goes back through Redis. */
  owed: boolean;
  /** Messages heard while this client yields (WaitQueue.yieldFor): the permits that came back, summed, and the latest available count. */
  heldBack: { cameBack: number; available: number };
}

function watchTurn(turns: Turns): void {
  if (turns.turnCheck) return;
  turns.turnCheck = true;
  setImmediate(() => {
    turns.turnCheck = false;
    turns.turnedAt = monotonicNow();
  });
}

/** One client's semaphore state, shared by its semaphores (see EngineContext.stateOf). */
class SemaphoreClientState {
  /** Permits handed straight to a waiting task, by waiter id (Redis counts them taken already). */
  readonly handed = new Map<string, number>();
  readonly needs: NeedAnnouncer;
  /** Per wait queue: one per semaphore with local waiters, gone when they are. */
  private readonly turns = new WeakMap<WaitQueue, Turns>();

  constructor(ctx: EngineContext, store: SemaphoreStore) {
    this.needs = new NeedAnnouncer(ctx, store);
  }

  turnsOf(queue: WaitQueue): Turns {
    let turns = this.turns.get(queue);
    if (!turns) this.turns.set(queue, (turns = { streak: 0, turnedAt: 0, turnCheck: false, owed: false, heldBack: { cameBack: 0, available: 0 } }));
    return turns;
  }
}

/** {@link RSemaphore} on the engine's wait loop; its protocol is {@link SemaphoreStore}. */
export class RedisSemaphore extends PermitCount<SemaphoreKeys, SemaphoreStore> implements RSemaphore {
  private readonly state: SemaphoreClientState;

  constructor(name: string, ctx: EngineContext, store: SemaphoreStore) {
    super(name, ctx, store, semaphoreKeys(ctx.keyPrefix, name));
    this.state = ctx.stateOf(SemaphoreClientState, () => new SemaphoreClientState(ctx, store));
  }

  // Overloaded in RSemaphore: `(permits?, options?)` or `(options?)`.
  async acquire(first?: number | WaitOptions, second?: WaitOptions): Promise<void> {
    const { permits, request } = readArguments(first, second, 'acquire');
    if (!(await this.acquireChecked(permits, request, 'timeout'))) throw new LockAcquireTimeoutError(this.name, request.waitMs ?? 0);
  }

  async tryAcquire(first?: number | WaitOptions, second?: WaitOptions): Promise<boolean> {
    const { permits, request } = readArguments(first, second, 'tryAcquire');
    try {
      return await this.acquireChecked(permits, { ...request, waitMs: request.waitMs ?? 0 }, 'not_acquired');
    } catch (error) {
      throw unansweredFailure(error);
    }
  }

  async release(permits: number = 1): Promise<void> {
    const checked = checkCount(permits, 'release(): permits');
    this.ctx.assertOpen();
    this.state.needs.countHeld(this.keys, -checked);
    await this.giveBack(checked);
  }

  async drainPermits(): Promise<number> {
    this.ctx.assertOpen();
    return this.store.drainPermits(this.keys, this.newMarker());
  }

  private async acquireChecked(permits: number, request: WaitRequest, refusal: 'not_acquired' | 'timeout'): Promise<boolean> {
    const { ctx, keys, store } = this;
    const { handed, needs } = this.state;
    ctx.assertOpen();
    request.signal?.throwIfAborted();
    const id = waiterId(ctx.newOpId(), permits);
    const marker = (op: string): string => opMarker(keys.permits, ctx.clientId, op);
    const tries: PermitTries = {
      // The call's own turn: close() waits for its try and its undo, so a grant landing during close goes back.
      key: keys.permits,
      owner: id,
      send: (op) => store.acquire(keys, marker(op), permits),
      // Leaves a tombstone for an acquire that has not run yet.
      undo: (op) => store.cancel(keys, marker(op), permits),
      // Refused: permits come back only by a release, so sleep until a message (or the capped sleep). Cancelled: retry at once.
      refusal: (reply) => (reply === 'granted' ? undefined : reply === 'refused' ? -1 : 0),
      // Permits do not expire: a late grant is still a grant (no `late`).
      keep: () => permits,
    };
    const watched = request.waitMs !== 0;
    if (watched) needs.begin(keys, id);
    let granted;
    try {
      granted = await acquireObserved(
        ctx,
        {
          name: this.name,
          channel: keys.channel,
          id,
          headOnly: false,
          arrival: 'queue',
          onMessage: this.heard,
          waitMs: request.waitMs,
          signal: request.signal,
          tryOnce: (signal) => this.tryOnce(id, permits, tries, signal),
          // Granted just as the caller gave up: nobody will release them, so they go back now.
          giveBack: (grant) => this.giveBack(grant),
        },
        { object: 'semaphore', refusal },
      );
    } finally {
      if (watched) needs.end(keys, id);
      // Permits handed to this call and not taken (timeout, abort, close, or taken from Redis): to the next local waiter or Redis.
      const unused = handed.get(id);
      if (unused !== undefined) {
        handed.delete(id);
        ctx.background.track(this.giveBack(unused).catch((error: unknown) => ctx.backgroundError(error)));
      }
    }
    if (granted === undefined) return false;
    needs.countHeld(keys, permits);
    return true;
  }

  /** Permits a local release handed to call `id` are taken without a Redis call; else one acquire script call. */
  private async tryOnce(id: string, permits: number, tries: PermitTries, signal: AbortSignal | undefined): Promise<TryOutcome<number>> {
    if (this.state.handed.get(id) !== permits) return attempt(this.ctx, tries, signal);
    this.ctx.assertOpen();
    signal?.throwIfAborted();
    this.state.handed.delete(id);
    return { grant: permits };
  }

  /** Local waiters first (no Redis call), the rest through Redis; all through Redis after a need or a full streak. Local waiters yield if others heard. */
  private async giveBack(permits: number): Promise<void> {
    const { ctx, keys } = this;
    const { handed } = this.state;
    let rest = permits;
    const queue = ctx.queues.get(keys.channel);
    const turns = queue && this.state.turnsOf(queue);
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
    if (queue && reply.receivers > 1 && queue.waiters.length > 0) queue.yieldFor();
  }

  /**
   * A message on the channel: "need:<clientId>" or "<came back>:<available>" wakes the local waiters it can serve (they try),
   * after this client's yield. False for anything else (dropped).
   */
  private readonly heard = (payload: string, queue: WaitQueue): boolean => {
    const { handed } = this.state;
    const turns = this.state.turnsOf(queue);
    if (payload.startsWith(NEED_PREFIX)) {
      const clientId = payload.slice(NEED_PREFIX.length);
      if (!CLIENT_ID.test(clientId)) return false;
      if (clientId !== this.ctx.clientId) turns.owed = true;
      return true;
    }
    const counts = readPermitCounts(payload);
    if (counts === undefined) return false;
    this.state.needs.permitsMoved(this.keys);
    const served = (id: string): boolean => handed.has(id);
    const waitMs = queue.yieldLeftMs();
    if (waitMs <= 0 && !queue.wakeHeldBack) {
      wakeFitting(counts.cameBack, counts.available, queue, served);
      return true;
    }
    // Yielding: what the messages gave back is woken for once the yield is over.
    turns.heldBack.cameBack += counts.cameBack;
    turns.heldBack.available = counts.available;
    queue.wakeAfterYield(waitMs, () => {
      const { cameBack, available } = turns.heldBack;
      turns.heldBack = { cameBack: 0, available: 0 };
      wakeFitting(cameBack, available, queue, served);
    });
    return true;
  };
}

/** `(permits?, options?)` or `(options?)`: checked before anything is sent. */
function readArguments(first: unknown, second: unknown, call: string): { permits: number; request: WaitRequest } {
  if (first !== null && typeof first === 'object' && second === undefined) {
    return { permits: 1, request: parseWaitOptions(first, call) };
  }
  const permits = first === undefined ? 1 : checkCount(first, `${call}(): permits`);
  return { permits, request: parseWaitOptions(second, call) };
}
