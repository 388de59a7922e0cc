import { acquireObserved, unansweredFailure } from '../../engine/acquire.js';
import { attempt, type AcquireReply } from '../../engine/attempt.js';
import { HoldAttempt } from '../../engine/hold-attempt.js';
import { releaseTraced } from '../../engine/release.js';
import type { EngineContext } from '../../engine/engine-context.js';
import { extendHold } from '../../engine/extend.js';
import { HoldHandle } from '../../engine/handle.js';
import type { Hold, HoldTarget } from '../../engine/hold.js';
import { DEFAULT_DRIFT_FACTOR } from '../../connection/time.js';
import type { WaitQueue } from '../../engine/wait-queue.js';
import { IllegalMonitorStateError, InvalidArgumentError, LockAcquireTimeoutError } from '../../errors.js';
import { checkRedisString } from '../../checks/argument-checks.js';
import { checkLease, LOCK_DEFAULTS, parseLockOptions, type LockRequest } from '../lock-options.js';
import { currentTask, newTaskContext, type TaskContext } from '../../tasks/task-context.js';
import { PermitCount } from '../permit-count.js';
import { permitSemaphoreKeys, type PermitSemaphoreKeys } from './keys.js';
import { MAX_NAME_BYTES } from '../names.js';
import { PERMIT_KIND, type PermitStore } from './permit-store.js';
import type { PermitHandle, PermitOptions, RPermitExpirableSemaphore } from './types.js';
import { readPermitCounts } from '../messages.js';

/** Each permit is a hold of its own, owned by its id. */
const MODE = 'permit';

/** `<came back>:<available>`: each process wakes as many one-permit waiters as came back and are available (they try). */
function wakePermits(payload: string, queue: WaitQueue): boolean {
  const counts = readPermitCounts(payload);
  if (counts === undefined) return false;
  const wake = Math.min(counts.cameBack, counts.available, queue.waiters.length);
  if (wake > 0) queue.wakeN(wake);
  return true;
}

/** {@link RPermitExpirableSemaphore} on the engine: waiting, renewal, loss and release are the engine's; the protocol is {@link PermitStore}. */
export class PermitExpirableSemaphore extends PermitCount<PermitSemaphoreKeys, PermitStore> implements RPermitExpirableSemaphore {
  constructor(name: string, ctx: EngineContext, store: PermitStore) {
    super(name, ctx, store, permitSemaphoreKeys(ctx.keyPrefix, name));
  }

  async acquire(options?: PermitOptions): Promise<PermitHandle> {
    const request = parseLockOptions(options, 'acquire');
    const permit = await this.acquireChecked(request, 'timeout');
    if (!permit) throw new LockAcquireTimeoutError(this.name, request.waitMs ?? 0);
    return permit;
  }

  async tryAcquire(options?: PermitOptions): Promise<PermitHandle | undefined> {
    const request = parseLockOptions(options, 'tryAcquire', LOCK_DEFAULTS.tryLockWaitMs);
    try {
      return await this.acquireChecked(request, 'not_acquired');
    } catch (error) {
      throw unansweredFailure(error);
    }
  }

  async release(id: string): Promise<void> {
    // Capped like a name: the id travels as a script argument and a hash field.
    checkRedisString(id, 'release(id): id', MAX_NAME_BYTES);
    const { ctx } = this;
    const own = ctx.holds.current(this.keys.permits, MODE, id);
    if (own) return this.releasePermit(own);
    ctx.assertOpen();
    const reply = await this.store.release(this.keys, id, undefined, ctx.newOpId());
    if (!reply.released) {
      throw new IllegalMonitorStateError(`permit "${id}" of "${this.name}" is not held (released, lapsed or unknown): nothing was released`);
    }
  }

  /** The permit, held by the caller's task for `run()` (or a new one outside any), or undefined when not acquired. */
  private async acquireChecked(request: LockRequest, refusal: 'not_acquired' | 'timeout'): Promise<PermitHandle | undefined> {
    const { ctx, store, keys } = this;
    const task = currentTask() ?? newTaskContext();
    ctx.assertOpen();
    request.signal?.throwIfAborted();
    if (request.leaseMs === undefined && !ctx.canRenew) {
      throw new InvalidArgumentError(`semaphore "${this.name}": leaseMs is required, this client has no watchdog to renew leases`);
    }
    const hold = await acquireObserved(
      ctx,
      {
        name: this.name,
        channel: keys.channel,
        id: ctx.newOpId(),
        headOnly: false,
        arrival: 'queue',
        onMessage: wakePermits,
        waitMs: request.waitMs,
        signal: request.signal,
        tryOnce: (signal) => {
          // A new id per try: a try cancelled for want of an answer leaves its tombstone on its own id, not the next try's.
          const id = `${ctx.clientId}:${ctx.newOpId()}`;
          const send = (_op: string, leaseMs: number): Promise<AcquireReply> => store.acquire(keys, id, leaseMs);
          return attempt(ctx, new HoldAttempt(ctx, this.target(id), request.leaseMs, request.maxLeaseMs, send, () => store.cancel(keys, id)), signal);
        },
        giveBack: (hold) => this.releasePermit(hold),
      },
      { object: 'permit_semaphore', refusal },
    );
    return hold && new LeasedPermit(this, hold, task);
  }

  private target(id: string): HoldTarget {
    return { name: this.name, key: this.keys.permits, mode: MODE, kind: PERMIT_KIND, owner: id, exclusive: false, driftFactor: DEFAULT_DRIFT_FACTOR };
  }

  /** The engine's release of one permit: a lapsed one rejects with its loss and never touches Redis. */
  async releasePermit(hold: Hold): Promise<void> {
    const { ctx, store, keys } = this;
    await releaseTraced(ctx, 'permit_semaphore', hold, this.name, {
      send: (op) => store.release(keys, hold.owner, hold.token, op),
      finish: async (op) => ((await store.release(keys, hold.owner, hold.token, op)).released ? 'released' : 'gone'),
    });
  }

  async extendPermit(hold: Hold, leaseMs: unknown): Promise<void> {
    await extendHold(this.ctx, hold, checkLease(leaseMs, 'extend'), this.store, `permit "${hold.owner}" of "${this.name}" is not held`);
  }
}

class LeasedPermit extends HoldHandle implements PermitHandle {
  constructor(
    private readonly semaphore: PermitExpirableSemaphore,
    hold: Hold,
    /** A permit is owned by its id, not a task: the task is kept for run(). */
    private readonly task: TaskContext,
  ) {
    super(hold);
  }

  protected override ownerTask(): TaskContext {
    return this.task;
  }

  protected releaseOnce(): Promise<void> {
    return this.semaphore.releasePermit(this.hold);
  }

  protected extendBy(leaseMs: number): Promise<void> {
    return this.semaphore.extendPermit(this.hold, leaseMs);
  }

  get id(): string {
    return this.hold.owner;
  }

  override get token(): string {
    return this.hold.token as string;
  }

  release(): Promise<void> {
    return this.end();
  }
}
