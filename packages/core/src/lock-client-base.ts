import { EventEmitter } from 'eventemitter3';
import { checkFunction } from './argument-checks.js';
import type { RLockClientEvents } from './client-events.js';
import { ClientClosedError } from './errors.js';
import { runInTaskOrNew } from './task-context.js';

/** What `close()` did with the holds the client still had. */
export interface CloseReport {
  /** Names of locks whose holds were released. */
  readonly released: string[];
  /** Names of locks whose release failed or timed out (they expire with their lease). */
  readonly failed: string[];
}

type HoldEventName = 'lockAcquired' | 'lockReleased' | 'lockLost' | 'lockRenewed';

/**
 * What every client shares, on one Redis or across Redlock masters: typed events
 * that a throwing listener cannot break, tasks, and an idempotent close().
 */
export abstract class LockClientBase extends EventEmitter<RLockClientEvents> {
  private closing: Promise<CloseReport> | undefined;

  /** True from the moment close() was called. */
  get isClosing(): boolean {
    return this.closing !== undefined;
  }

  /**
   * Runs `fn` in a new task (the Node.js counterpart of a Java thread), or in the
   * current one when called inside a task. Locks taken in it belong to the task.
   */
  task<T>(fn: () => T | Promise<T>): Promise<T> {
    checkFunction(fn, 'task(fn)');
    return runInTaskOrNew(async () => fn());
  }

  /**
   * Rejects waiters with ClientClosedError, stops renewal, aborts the signals of
   * the holds still held (reason `closed`), releases them best-effort within
   * commandTimeoutMs, and closes the connections the client created (a
   * connection it was given stays open). Resolves to the names of the locks it
   * released and of those whose release failed (they expire with their lease).
   * Idempotent: later calls return the same promise.
   */
  close(): Promise<CloseReport> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  protected abstract shutdown(): Promise<CloseReport>;

  /** @throws ClientClosedError once close() was called. */
  protected assertOpen(): void {
    if (this.closing) throw new ClientClosedError();
  }

  /**
   * Emits from places where a throwing listener must not escape (timers, the
   * middle of recording a grant or a release): a listener's error is reported as
   * an `error` event, and one thrown by an `error` listener is dropped.
   */
  protected emitSafely<E extends HoldEventName>(event: E, payload: Parameters<RLockClientEvents[E]>[0]): void {
    try {
      (this.emit as (event: E, payload: unknown) => boolean)(event, payload);
    } catch (listenerError) {
      this.reportError(listenerError);
    }
  }

  /** Emits `error` for a background failure; never throws. */
  protected reportError(error: unknown): void {
    try {
      this.emit('error', error instanceof Error ? error : new Error(String(error)));
    } catch {
      // An error listener that throws has nowhere left to report to.
    }
  }
}
