import { acquireOrWait, type TryOutcome } from '../../engine/acquire.js';
import type { EngineContext } from '../../engine/engine-context.js';
import { Hold, type HoldObserver, type HoldTarget } from '../../engine/hold.js';
import { wasNotSent } from '../../engine/transport.js';
import { ClientClosedError, LockAcquireTimeoutError, RedisUnavailableError } from '../../errors.js';
import { checkCount } from '../../options/count-checks.js';
import { parseWaitOptions, type WaitOptions, type WaitRequest } from '../../options/wait-options.js';
import { opMarker, semaphoreKeys, type SemaphoreKeys } from './keys.js';
import type { SemaphoreStore } from './semaphore-store.js';
import type { RSemaphore } from './types.js';
import { waiterId, wakeFitting } from './wake-fitting.js';

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
 * The semaphore (Redisson's RSemaphore) on the engine: see {@link RSemaphore}.
 * Its waiting is the engine's (one try, subscribe, try again, sleep until a
 * release message or the capped sleep); its protocol is {@link SemaphoreStore}.
 */
export class RedisSemaphore implements RSemaphore {
  readonly keys: SemaphoreKeys;

  constructor(
    readonly name: string,
    private readonly ctx: EngineContext,
    private readonly store: SemaphoreStore,
  ) {
    this.keys = semaphoreKeys(ctx.keyPrefix, name);
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
    await this.store.release(this.keys, this.newMarker(), checked);
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
    const hold = await acquireOrWait(ctx, {
      name: this.name,
      channel: this.keys.channel,
      id: waiterId(++calls, permits),
      headOnly: false,
      queueLocally: true,
      onMessage: wakeFitting,
      reentry: false,
      waitMs: request.waitMs,
      signal: request.signal,
      tryOnce: (signal) => this.tryOnce(permits, signal),
      // Granted just as the caller gave up: nobody will release them, so they go back now.
      giveBack: () => this.store.release(this.keys, this.newMarker(), permits),
    });
    return hold !== undefined;
  }

  /**
   * One acquire script call, with what the engine's `attempt` gives a hold,
   * minus the lease: an operation id (its marker), and an undo when the
   * caller aborted, the client closed, or no answer came (the call may still
   * run: the undo goes out behind it on the same connection and leaves a
   * tombstone). Permits do not expire, so a late grant is still a grant.
   */
  private async tryOnce(permits: number, signal: AbortSignal | undefined): Promise<TryOutcome> {
    const { ctx, store, keys } = this;
    ctx.assertOpen();
    signal?.throwIfAborted();
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
