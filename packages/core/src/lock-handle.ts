import { IllegalMonitorStateError, LockLostError } from './errors.js';
import type { LockHandle } from './lock-types.js';
import { runInTask, type TaskContext } from './task-context.js';

/** What a handle shows of the hold it took (a core hold, a Redlock hold). */
export interface HandleHold {
  readonly token: string | undefined;
  readonly signal: AbortSignal;
  /** False once the hold is released or lost. */
  readonly active: boolean;
}

/**
 * One acquisition returned by `acquire()`: released once, by `unlock()` or on
 * dispose. `release` releases exactly the hold this handle took.
 */
export class ReentrantLockHandle implements LockHandle {
  private released = false;

  constructor(
    readonly name: string,
    private readonly hold: HandleHold,
    private readonly task: TaskContext,
    private readonly release: () => Promise<void>,
  ) {}

  get token(): string | undefined {
    return this.hold.token;
  }

  get signal(): AbortSignal {
    return this.hold.signal;
  }

  async run<T>(fn: () => T | Promise<T>): Promise<T> {
    if (this.released) {
      throw new IllegalMonitorStateError(`the handle of lock "${this.name}" was released: run() needs a held lock`);
    }
    return runInTask(this.task, fn);
  }

  async unlock(): Promise<void> {
    if (this.released) {
      throw new IllegalMonitorStateError(`the handle of lock "${this.name}" was already released`);
    }
    try {
      await this.release();
      this.released = true;
    } catch (error) {
      // A lost hold is gone for good, and so is one a failed release gave up
      // (Redlock: a final release without a majority); only an unlock that left
      // the hold standing may be retried.
      if (error instanceof LockLostError || !this.hold.active) this.released = true;
      throw error;
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.released) await this.unlock();
  }
}
