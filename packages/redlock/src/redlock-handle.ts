import { IllegalMonitorStateError, LockLostError, runInTask, type LockHandle, type TaskContext } from '@org/rlock-core';
import type { RedlockHold } from './redlock-hold.js';

/** One acquisition returned by `acquire()`: released once, by `unlock()` or on dispose. */
export class RedlockLockHandle implements LockHandle {
  private released = false;

  constructor(
    readonly name: string,
    private readonly hold: RedlockHold,
    private readonly task: TaskContext,
    private readonly release: () => Promise<void>,
  ) {}

  /** Always undefined: Redlock has no fencing token (see the README). */
  get token(): undefined {
    return undefined;
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
      // A lost hold is gone for good, and so is one whose final release went out
      // (an undecided release loses it): only an unlock that never reached the
      // masters may be retried.
      if (error instanceof LockLostError || !this.hold.active) this.released = true;
      throw error;
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.released) await this.unlock();
  }
}
