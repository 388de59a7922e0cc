import { IllegalMonitorStateError, LockLostError } from '../errors.js';
import { runInTask, taskOfOwner, type TaskContext } from '../tasks/task-context.js';
import type { Hold } from './hold.js';

/** `HoldHandle.bits`: the handle was released. */
const ENDED = 1;
/** The first bit of `HoldHandle.bits` a subclass may use. */
export const HANDLE_OWN_BIT = 2;

/**
 * One acquisition (a lock's, a permit's), ended once by its release call or on dispose. One per held lock: release and
 * extension are subclass methods, not closures per handle, and the flags share one field.
 */
export abstract class HoldHandle implements AsyncDisposable {
  /** ENDED, and from HANDLE_OWN_BIT up the subclass's flags. */
  protected bits = 0;

  constructor(protected readonly hold: Hold) {}

  /** Rebuilt from the hold's owner, so a lock's handle keeps no task; a permit keeps its own. */
  protected ownerTask(): TaskContext {
    return taskOfOwner(this.hold.owner);
  }

  /** The object's name. */
  get name(): string {
    return this.hold.name;
  }

  /** Releases this acquisition (not `release`: a permit handle's subclass needs that name public). */
  protected abstract releaseOnce(): Promise<unknown>;

  /** Extends the hold's lease to `leaseMs` (checked there) from now. */
  protected abstract extendBy(leaseMs: number): Promise<void>;

  /**
   * Extends the hold's lease to `leaseMs` from now (never shortens it).
   * @throws IllegalMonitorStateError (as a rejection) once the handle was released
   * @throws LockLostError when the hold was lost
   */
  async extend(leaseMs: number): Promise<void> {
    this.assertHeld('extend()');
    await this.extendBy(leaseMs);
  }

  /** The hold's fencing token (see the object's docs); undefined where there is none. */
  get token(): string | undefined {
    return this.hold.token;
  }

  /** Aborts with a LockLostError (reason on it) the moment the hold is known lost. */
  get signal(): AbortSignal {
    return this.hold.signal;
  }

  /**
   * Runs `fn` as this handle's owner, so nested acquisitions reenter.
   * @throws IllegalMonitorStateError (as a rejection) once the handle was released.
   */
  async run<T>(fn: () => T | Promise<T>): Promise<T> {
    this.assertHeld('run()');
    return runInTask(this.ownerTask(), fn);
  }

  protected assertHeld(call: string): void {
    if ((this.bits & ENDED) !== 0) throw new IllegalMonitorStateError(`the handle of "${this.name}" was released: ${call} needs a held hold`);
  }

  /** Ends this acquisition; the object's release call (`unlock()`, `release()`) is this. */
  protected async end(): Promise<void> {
    if ((this.bits & ENDED) !== 0) {
      throw new IllegalMonitorStateError(`the handle of "${this.name}" was already released`);
    }
    try {
      await this.releaseOnce();
      this.bits |= ENDED;
    } catch (error) {
      // Only a release that left the hold standing may be retried: a lost hold,
      // or one whose final release went out (the client finishes it), is ended.
      if (error instanceof LockLostError || !this.hold.active) this.bits |= ENDED;
      throw error;
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if ((this.bits & ENDED) === 0) await this.end();
  }
}
