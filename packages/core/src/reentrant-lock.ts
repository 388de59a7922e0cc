import { nanoid } from 'nanoid';
import { ClientClosedError, IllegalMonitorStateError, RedisUnavailableError } from './errors.js';
import { Hold } from './hold.js';
import { leaseDeadline, monotonicNow } from './lease-deadline.js';
import { lockKeys, type LockKeys } from './lock-keys.js';
import type { LockRuntime } from './lock-runtime.js';
import { ReentrantLockBase, type AcquireRequest } from './reentrant-lock-base.js';
import type { Waiter } from './release-subscriber.js';
import type { TaskContext } from './task-context.js';

type TryResult = { readonly hold: Hold } | { readonly ttlMs: number };

/**
 * How long a client that just released a lock holds back its own waiters when
 * other clients wait too (a fairness heuristic: see ReleaseSubscriber.releasedHere).
 */
const HANDOFF_YIELD_MS = 2;

/** The reentrant lock on one Redis: see {@link RLock}. */
export class ReentrantLock extends ReentrantLockBase<Hold> {
  readonly keys: LockKeys;

  constructor(
    name: string,
    private readonly runtime: LockRuntime,
  ) {
    super(name, runtime);
    this.keys = lockKeys(runtime.keyPrefix, name);
  }

  async isLocked(): Promise<boolean> {
    this.runtime.assertOpen();
    return this.runtime.backend.exists(this.keys);
  }

  async isHeldByCurrentTask(): Promise<boolean> {
    const owner = this.ownerOf(this.requireTask('isHeldByCurrentTask'));
    this.runtime.assertOpen();
    // A hold this client knows lost (deadline passed, unreachable) is not held,
    // whatever the server still says: safety before liveness.
    if (this.runtime.registry.current(this.keys.lock, owner)?.active !== true) return false;
    return (await this.runtime.backend.readHolder(this.keys))?.owner === owner;
  }

  async getHoldCount(): Promise<number> {
    const owner = this.ownerOf(this.requireTask('getHoldCount'));
    this.runtime.assertOpen();
    if (this.runtime.registry.current(this.keys.lock, owner)?.active !== true) return 0;
    const holder = await this.runtime.backend.readHolder(this.keys);
    return holder?.owner === owner ? holder.count : 0;
  }

  async remainTimeToLive(): Promise<number> {
    this.runtime.assertOpen();
    return this.runtime.backend.pttl(this.keys);
  }

  async forceUnlock(): Promise<boolean> {
    this.runtime.assertOpen();
    const released = await this.runtime.backend.forceUnlock(this.keys);
    for (const hold of this.runtime.registry.holdsOf(this.keys.lock)) hold.lose('forced');
    return released;
  }

  // ---- acquisition -------------------------------------------------------

  /**
   * Tries, then waits on the lock's channel and tries again on each release
   * message or when the holder's TTL (capped) runs out, until acquired, `waitMs`
   * runs out (undefined), or the signal aborts (rejects with its reason).
   */
  protected async acquireFor(task: TaskContext, request: AcquireRequest): Promise<Hold | undefined> {
    const { runtime } = this;
    const owner = this.ownerOf(task);
    try {
      return await this.acquireOrWait(owner, request);
    } catch (error) {
      // Whatever failed once close() began (a SUBSCRIBE or a try cut off by the
      // disconnect) is reported as the close it is.
      if (runtime.closed && !(error instanceof ClientClosedError) && !request.signal?.aborted) throw new ClientClosedError();
      throw error;
    }
  }

  private async acquireOrWait(owner: string, request: AcquireRequest): Promise<Hold | undefined> {
    const { runtime } = this;
    const reentry = runtime.registry.current(this.keys.lock, owner)?.active === true;
    const waitUntil = request.waitMs === undefined ? Infinity : monotonicNow() + request.waitMs;

    // Tasks of this process queue behind the ones already waiting (no barging):
    // a releasing task that locks again at once must not starve them; it sleeps
    // until the waiters ahead have had their turn. Reentry never queues, or a
    // task would wait for itself.
    const queueBehind = !reentry && request.waitMs !== 0 && runtime.subscriber.hasWaiters(this.keys.channel);
    let ttlMs = runtime.maxSleepMs;
    if (!queueBehind) {
      const first = await this.tryOnce(owner, request);
      if ('hold' in first) return first.hold;
      if (request.waitMs === 0) return undefined;
      ttlMs = first.ttlMs;
    }

    let waiter: Waiter | undefined;
    let acquired = false;
    try {
      waiter = await runtime.subscriber.join(this.keys.channel, owner);
      // The subscription is acknowledged: a release from now on cannot be
      // missed, so one more try closes the gap since the first one.
      let tryNow = !queueBehind;
      for (;;) {
        if (tryNow) {
          const result = await this.tryOnce(owner, request);
          if ('hold' in result) {
            acquired = true;
            // Branches of one task share its ownership: those waiting beside this
            // one can reenter now instead of sleeping until the next release.
            runtime.subscriber.wakeOwner(waiter, owner);
            return result.hold;
          }
          ttlMs = result.ttlMs;
        }
        const remaining = waitUntil - monotonicNow();
        if (remaining <= 0) return undefined;
        // PTTL -1 (a key without TTL) must not park a waiter forever.
        const sleepMs = Math.min(ttlMs >= 0 ? Math.max(1, ttlMs) : runtime.maxSleepMs, runtime.maxSleepMs, remaining);
        await waiter.sleep(Math.ceil(sleepMs), request.signal);
        if (waiter.channel.closedError) throw waiter.channel.closedError;
        tryNow = true;
      }
    } finally {
      if (waiter) runtime.subscriber.leave(waiter, acquired);
    }
  }

  /**
   * One acquire script call. A late or aborted grant counts as not acquired and
   * is undone, and so is a call that got no answer in time (it may still run
   * later). The undo is queued on the connection inside the same slot of the
   * owner's operation chain, so no other operation of the owner can land
   * between the acquire and its undo.
   */
  private async tryOnce(owner: string, request: AcquireRequest): Promise<TryResult> {
    const { runtime } = this;
    runtime.assertOpen();
    request.signal?.throwIfAborted();
    const leaseMs = request.leaseMs ?? runtime.watchdogTimeoutMs;
    const op = nanoid();
    let sentAt = 0;
    const outcome = await runtime.registry.serialize(this.keys.lock, owner, async (): Promise<TryResult | 'undone'> => {
      sentAt = monotonicNow();
      let reply;
      try {
        reply = await runtime.backend.acquire(this.keys, owner, leaseMs, op);
      } catch (error) {
        if (error instanceof RedisUnavailableError) this.undoAcquire(owner, op);
        throw error;
      }
      if (!reply.granted) return { ttlMs: reply.ttlMs };
      const late = monotonicNow() >= leaseDeadline(sentAt, leaseMs);
      if (late || request.signal?.aborted || runtime.closed) {
        this.undoAcquire(owner, op);
        return 'undone';
      }
      return { hold: this.recordGrant(owner, reply.token, reply.count, sentAt, request.leaseMs) };
    });
    if (outcome !== 'undone') return outcome;
    request.signal?.throwIfAborted();
    if (runtime.closed) throw new ClientClosedError();
    return { ttlMs: 1 };
  }

  private recordGrant(owner: string, token: string, count: number, sentAt: number, leaseMs: number | undefined): Hold {
    const { registry } = this.runtime;
    let hold = registry.current(this.keys.lock, owner);
    if (hold?.active && hold.token !== token) {
      // A fresh token for a hold we believed active: it expired unseen.
      hold.lose('expired');
    }
    if (!hold || !hold.active) {
      const fresh = new Hold(this.name, this.keys, owner, token, this.runtime.watchdogTimeoutMs, this.runtime.holdObserver);
      if (hold && hold.count > 0) fresh.previous = hold;
      registry.set(fresh);
      hold = fresh;
    }
    hold.acquired(count, sentAt, leaseMs);
    this.runtime.acquired(hold);
    return hold;
  }

  /**
   * Queues (without awaiting) the release of acquire `op` if it is the hold's
   * last op: it runs after the acquire on the same connection. Best effort.
   */
  private undoAcquire(owner: string, op: string): void {
    const { runtime } = this;
    const undo = runtime.backend
      .release(this.keys, { owner, op: nanoid(), ifOp: op })
      .catch((error: unknown) => runtime.backgroundError(error));
    runtime.registry.track(undo);
  }

  // ---- release -----------------------------------------------------------

  /**
   * Releases one acquisition of `owner`: of `own` when the caller knows which
   * hold it took (a handle, withLock), else of the owner's newest hold. A lost
   * hold is counted off without touching Redis, so it can never release a newer
   * hold of the same owner; the release script also checks the token.
   */
  protected async releaseFor(owner: string, own?: Hold): Promise<void> {
    const { runtime } = this;
    const hold = own ?? runtime.registry.current(this.keys.lock, owner);
    if (!hold || hold.count <= 0) {
      throw new IllegalMonitorStateError(`lock "${this.name}" is not held by the current task (nothing was released)`);
    }
    if (!hold.active) {
      runtime.registry.dropOne(hold);
      throw hold.lostError ?? new IllegalMonitorStateError(`lock "${this.name}" is not held by the current task`);
    }
    runtime.assertOpen();
    // Renewal stops before what should be the last release is sent, so a renewal
    // racing it cannot come back "gone" and report a clean release as a loss;
    // the reply decides what happens next.
    if (hold.count <= 1) hold.beginFinalRelease();
    let reply;
    try {
      reply = await runtime.registry.serialize(this.keys.lock, owner, () =>
        runtime.backend.release(this.keys, { owner, op: nanoid(), token: hold.token }),
      );
    } catch (error) {
      hold.resumeAfterFailedRelease();
      throw error;
    }
    if (!hold.active) {
      // Lost while the release was in flight (its fixed deadline passed, or a
      // forceUnlock): the holder must hear of it, whatever the reply.
      runtime.registry.dropOne(hold);
      throw hold.lostError;
    }
    if (reply.released) {
      hold.releasedOne(reply.remaining);
      if (reply.remaining === 0) {
        runtime.registry.remove(hold);
        runtime.released(hold);
        runtime.subscriber.releasedHere(this.keys.channel, reply.receivers ?? 0, HANDOFF_YIELD_MS);
      }
      return;
    }
    hold.lose(reply.why === 'not-held' && reply.keyExists ? 'taken' : 'expired');
    runtime.registry.dropOne(hold);
    throw hold.lostError;
  }

  // ---- helpers -----------------------------------------------------------
}
