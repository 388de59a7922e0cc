import { InvalidArgumentError, LockAcquireTimeoutError } from '../../errors.js';
import { checkFunction, describeValue } from '../../checks/argument-checks.js';
import { parseLockOptions, requireTask, type LockOptions, type LockRequest } from '../lock-options.js';
import { currentTask, newTaskContext, runInTask, runInCurrentTaskOrNew, type TaskContext } from '../../tasks/task-context.js';
import { monotonicNow } from '../../connection/time.js';
import { unansweredFailure } from '../../engine/acquire.js';
import { observeCall, Telemetry } from '../../observability/telemetry.js';
import { ORDER_KEY } from '../lock/order-key.js';
import type { LockHandle, LockScope, RLock } from '../lock/types.js';

/** What a multi-lock's `withLock` hands to its function. */
export interface MultiLockScope extends LockScope<undefined> {
  /** Aborts (reason: the member's LockLostError) when any member's hold is lost. */
  readonly signal: AbortSignal;
  /** Each member's fencing token, in the order the locks were given (undefined for Redlock members). */
  readonly tokens: readonly (string | undefined)[];
}

/** One acquisition of every member, as returned by a multi-lock's `acquire()`. */
export interface MultiLockHandle extends LockHandle<undefined> {
  /** Each member's fencing token, in the order the locks were given. */
  readonly tokens: readonly (string | undefined)[];
}

/** A member: a lock of either client (a Redlock lock's token is undefined). */
type AnyLock = RLock<string | undefined>;
type AnyHandle = LockHandle<string | undefined>;

/** All-or-nothing RLock over locks of any kind and client, taken in one global order (by full key) so multi-locks never deadlock; undone last first. */
export class MultiLock implements RLock<undefined> {
  /** `multi(<member names>)`, for errors and events. */
  readonly name: string;
  /** The members in acquisition order (by full key; ties keep the given order). */
  private readonly ordered: readonly AnyLock[];

  /** @throws InvalidArgumentError for an empty list, or a member that is not a lock. */
  constructor(
    private readonly members: readonly AnyLock[],
    /** Where its own calls are measured: its client's, or (made directly) its own. */
    private readonly telemetry: Telemetry = new Telemetry(undefined),
  ) {
    // Checked as unknown (JavaScript callers): Array.isArray would narrow a readonly array to any[].
    const list: unknown = members;
    if (!Array.isArray(list) || list.length === 0) {
      throw new InvalidArgumentError(`a multi-lock needs a non-empty array of locks, got ${describeValue(members)}`);
    }
    for (const [index, member] of members.entries()) {
      if (member === null || typeof member !== 'object' || typeof member.acquire !== 'function') {
        throw new InvalidArgumentError(`multi-lock member ${index} must be a lock (an RLock), got ${describeValue(member)}`);
      }
    }
    this.name = `multi(${members.map((member) => member.name).join(',')})`;
    this.ordered = members
      .map((member, index) => ({ member, index, key: (member as { readonly [ORDER_KEY]?: string })[ORDER_KEY] ?? member.name }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.index - b.index))
      .map((entry) => entry.member);
  }

  async lock(options?: LockOptions): Promise<void> {
    requireTask(this.name, 'lock');
    const all = () => this.takeAll(options, parseLockOptions(options, 'lock'), (member, memberOptions) => member.lock(memberOptions).then(() => member));
    await observeCall(this.telemetry, 'multi_lock', this.name, 'timeout', ownSignal(options), all, () => true);
  }

  async tryLock(options?: LockOptions): Promise<boolean> {
    requireTask(this.name, 'tryLock');
    const tryOptions = { waitMs: 0, ...options };
    const all = async (): Promise<boolean> => {
      try {
        const request = parseLockOptions(tryOptions, 'tryLock');
        return (await this.takeAll(tryOptions, request, (member, memberOptions) => member.tryLock(memberOptions).then((taken) => taken && member))) !== false;
      } catch (error) {
        // As a member's tryLock: false for a plain timeout, the Redis failure for one Redis caused.
        if (error instanceof LockAcquireTimeoutError && !(error.cause instanceof Error)) return false;
        throw unansweredFailure(error);
      }
    };
    return observeCall(this.telemetry, 'multi_lock', this.name, 'not_acquired', ownSignal(options), all, (taken) => taken);
  }

  async unlock(): Promise<void> {
    requireTask(this.name, 'unlock');
    await releaseAll([...this.ordered].reverse());
  }

  async withLock<T>(fn: (scope: MultiLockScope) => T | Promise<T>, options?: LockOptions): Promise<T> {
    checkFunction(fn, 'withLock(fn)');
    parseLockOptions(options, 'withLock');
    return runInCurrentTaskOrNew(async () => {
      const handle = await this.acquire(options);
      let result: T;
      try {
        result = await fn({ signal: handle.signal, token: undefined, tokens: handle.tokens });
      } catch (error) {
        await handle.unlock().catch(() => undefined);
        throw error;
      }
      await handle.unlock();
      return result;
    });
  }

  async acquire(options?: LockOptions): Promise<MultiLockHandle> {
    const request = parseLockOptions(options, 'acquire');
    const task = currentTask() ?? newTaskContext();
    const all = () =>
      runInTask(task, async () => {
        const taken = await this.takeAll<AnyHandle>(options, request, (member, memberOptions) => member.acquire(memberOptions));
        return new MultiHandle(this.name, task, this.members, this.ordered, taken as AnyHandle[]);
      });
    return observeCall(this.telemetry, 'multi_lock', this.name, 'timeout', request.signal, all, () => true);
  }

  async isLocked(): Promise<boolean> {
    return (await Promise.all(this.members.map((member) => member.isLocked()))).every(Boolean);
  }

  async isHeldByCurrentTask(): Promise<boolean> {
    return (await Promise.all(this.members.map((member) => member.isHeldByCurrentTask()))).every(Boolean);
  }

  async getHoldCount(): Promise<number> {
    return Math.min(...(await Promise.all(this.members.map((member) => member.getHoldCount()))));
  }

  async remainTimeToLive(): Promise<number> {
    return Math.min(...(await Promise.all(this.members.map((member) => member.remainTimeToLive()))));
  }

  async forceUnlock(): Promise<boolean> {
    return (await Promise.all(this.members.map((member) => member.forceUnlock()))).some(Boolean);
  }

  async extend(leaseMs: number): Promise<void> {
    await Promise.all(this.members.map((member) => member.extend(leaseMs)));
  }

  /**
   * Takes every member in order (what `take` gives back: the member, its handle; false: refused), within one `waitMs` for all;
   * on a refusal or failure gives back what it took, last first.
   */
  private async takeAll<T extends Releasable>(
    options: LockOptions | undefined,
    request: LockRequest,
    take: (member: AnyLock, options: LockOptions) => Promise<T | false>,
  ): Promise<T[] | false> {
    const deadline = request.waitMs === undefined ? undefined : monotonicNow() + request.waitMs;
    const { waitMs: _ignored, ...rest } = options ?? {};
    const taken: T[] = [];
    try {
      for (const member of this.ordered) {
        // What is left of the call's wait; never 0 (one try, bounded only by commandTimeoutMs) when the call had a wait.
        const waitMs = deadline === undefined || request.waitMs === 0 ? request.waitMs : Math.max(1, Math.floor(deadline - monotonicNow()));
        const one = await take(member, waitMs === undefined ? rest : { ...rest, waitMs });
        if (one === false) break;
        taken.push(one);
      }
    } catch (error) {
      await releaseAll(taken.reverse());
      // The member's cause (Redis did not answer) stays the multi-lock's.
      if (error instanceof LockAcquireTimeoutError)
        throw new LockAcquireTimeoutError(this.name, request.waitMs ?? 0, { cause: error.cause, holder: error.holder });
      throw error;
    }
    if (taken.length === this.ordered.length) return taken;
    await releaseAll(taken.reverse());
    return false;
  }
}

class MultiHandle implements MultiLockHandle {
  readonly token = undefined;
  readonly tokens: readonly (string | undefined)[];
  readonly signal: AbortSignal;
  private released = false;

  constructor(
    readonly name: string,
    private readonly task: TaskContext,
    members: readonly AnyLock[],
    ordered: readonly AnyLock[],
    private readonly handles: readonly LockHandle<string | undefined>[],
  ) {
    const byMember = new Map(ordered.map((member, index) => [member, handles[index] as LockHandle<string | undefined>]));
    this.tokens = members.map((member) => byMember.get(member)?.token);
    this.signal = AbortSignal.any(handles.map((handle) => handle.signal));
  }

  run<T>(fn: () => T | Promise<T>): Promise<T> {
    return (this.handles[0] as LockHandle<string | undefined>).run(() => runInTask(this.task, fn));
  }

  async unlock(): Promise<void> {
    this.released = true;
    await releaseAll([...this.handles].reverse());
  }

  async extend(leaseMs: number): Promise<void> {
    await Promise.all(this.handles.map((handle) => handle.extend(leaseMs)));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.released) await this.unlock();
  }
}

/** A member or a member's handle. */
interface Releasable {
  unlock(): Promise<void>;
}

/** Releases each of `taken` in the order given (last taken first), whatever the others did; rejects with the first failure. */
async function releaseAll(taken: readonly Releasable[]): Promise<void> {
  let failure: Error | undefined;
  for (const one of taken) {
    await one.unlock().catch((error: unknown) => {
      failure ??= error instanceof Error ? error : new Error(String(error));
    });
  }
  if (failure !== undefined) throw failure;
}

/** The `signal` option if the options have it as their own (an inherited one is no option; the parse refuses a bad one). */
function ownSignal(options: LockOptions | undefined): AbortSignal | undefined {
  return typeof options === 'object' && options !== null && Object.hasOwn(options, 'signal') ? options.signal : undefined;
}
