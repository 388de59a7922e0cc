import { currentTask, newTaskContext, runInTask, type TaskContext } from './task-context.js';

/** Where a task that ended was started: `client.task(fn)`, or a request under `taskMiddleware()`. */
export type TaskSource = 'task' | 'request';

/** Told when a task started by `client.task(fn)` or `taskMiddleware()` ends. */
export type TaskEndListener = (task: TaskContext, source: TaskSource) => void;

// One set per process, shared by the ESM and the CJS build like the task
// storage: a task started by one copy may hold locks of a client of the other.
const LISTENERS_KEY = Symbol.for('@org/rlock-core/task-end-listeners/v1');
const slot = globalThis as { [LISTENERS_KEY]?: Set<TaskEndListener> };
const listeners: Set<TaskEndListener> = (slot[LISTENERS_KEY] ??= new Set());

/** Hears the end of every task started by `client.task(fn)` or `taskMiddleware()`; returns the way to stop. */
export function onTaskEnd(listener: TaskEndListener): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

/** Tells every listener that `task` ended. A throwing listener does not keep the others from hearing it. */
export function taskEnded(task: TaskContext, source: TaskSource): void {
  for (const listener of listeners) {
    try {
      listener(task, source);
    } catch {
      // A listener reports its own failures (a client emits `error`).
    }
  }
}

/**
 * Runs `fn` in the current task, or in a new one that ends (listeners hear
 * it) when `fn` settles. Only a task started here ends here: nested calls
 * keep the caller's task, which ends with the outermost.
 */
export function runInTaskOrNewReportingEnd<T>(fn: () => Promise<T>): Promise<T> {
  if (currentTask()) return fn();
  const task = newTaskContext();
  const settled = runInTask(task, fn);
  // The end is heard before the caller's continuation runs, in both outcomes.
  return settled.then(
    (value) => {
      taskEnded(task, 'task');
      return value;
    },
    (error: unknown) => {
      taskEnded(task, 'task');
      throw error;
    },
  );
}
