import type { TryOutcome } from '../../engine/attempt.js';
import { acquireObserved } from '../../engine/acquire.js';
import type { EngineContext } from '../../engine/engine-context.js';
import type { WaitQueue } from '../../engine/wait-queue.js';
import { checkCount } from '../../checks/count-checks.js';
import { parseWaitOptions, type WaitOptions } from '../wait-options.js';
import { opMarker } from '../names.js';
import { latchKeys, type LatchKeys } from './keys.js';
import type { LatchStore } from './latch-store.js';
import type { RCountDownLatch } from './types.js';

/** 'zero' is announced once: every local awaiter wakes and reads the count (one busy reading finds the wake at its next sleep). */
function wakeAll(payload: string, queue: WaitQueue): boolean {
  if (payload !== 'zero') return false;
  queue.wakeAll('released');
  return true;
}

/** {@link RCountDownLatch} on the engine: `await()` is the wait loop with a read of the count as its try. */
export class CountDownLatch implements RCountDownLatch {
  readonly keys: LatchKeys;

  constructor(
    readonly name: string,
    private readonly ctx: EngineContext,
    private readonly store: LatchStore,
  ) {
    this.keys = latchKeys(ctx.keyPrefix, name);
  }

  async trySetCount(count: number): Promise<boolean> {
    const checked = checkCount(count, 'trySetCount(): count');
    this.ctx.assertOpen();
    return this.store.trySetCount(this.keys, this.newMarker(), checked);
  }

  async countDown(): Promise<number> {
    this.ctx.assertOpen();
    return this.store.countDown(this.keys, this.newMarker());
  }

  async getCount(): Promise<number> {
    this.ctx.assertOpen();
    return this.store.count(this.keys);
  }

  async await(options?: WaitOptions): Promise<boolean> {
    const request = parseWaitOptions(options, 'await');
    const { ctx } = this;
    ctx.assertOpen();
    request.signal?.throwIfAborted();
    const open = await acquireObserved(
      ctx,
      {
        name: this.name,
        channel: this.keys.channel,
        id: ctx.newOpId(),
        headOnly: false,
        // Awaiters do not compete: a newcomer reads at once rather than queue.
        arrival: 'try',
        onMessage: wakeAll,
        waitMs: request.waitMs,
        signal: request.signal,
        // Zero is "open"; otherwise sleep until the message or the capped sleep.
        tryOnce: async (signal): Promise<TryOutcome<true>> => {
          ctx.assertOpen();
          signal?.throwIfAborted();
          return (await this.store.count(this.keys)) > 0 ? { retryInMs: -1 } : { grant: true };
        },
      },
      { object: 'latch', refusal: 'not_acquired' },
    );
    return open === true;
  }

  private newMarker(): string {
    return opMarker(this.keys.count, this.ctx.clientId, this.ctx.newOpId());
  }
}
