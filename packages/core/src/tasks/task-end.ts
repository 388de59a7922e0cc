import { newTaskContext, processWide, runInTask, type TaskContext } from './task-context.js';

/** Where a task that ended was started: `client.task(fn)`, or a request under `taskMiddleware()`. */
export type TaskSource = 'task' | 'request';

/** Told when a task started by `client.task(fn)` or `taskMiddleware()` ends. */
export type TaskEndListener = (task: TaskContext, source: TaskSource) => void;

// Shared by the ESM and the CJS build like the task storage: a task of one copy may hold locks of the other's clients.
const listeners = processWide('task-end-listeners/v1', () => new Set<TaskEndListener>());

// Tasks that will be heard ending running now, process-wide. While none runs, no hold's owner can be heard ending:
// an owner id is new with its task, so its holds are taken while it runs.
const live = processWide('ending-tasks-live/v1', () => ({ count: 0 }));

/** True while a task started by `client.task(fn)` or `taskMiddleware()` runs: only then may a hold taken now see its task end. */
export function endingTasksRun(): boolean {
  return live.count > 0;
}

/** A task that will be heard ending started: it counts as running until the function returned tells every listener that it ended. */
export function endingTaskStarted(task: TaskContext, source: TaskSource): () => void {
  live.count++;
  return () => {
    taskEnded(task, source);
    live.count--;
  };
}

/** Hears the end of every task started by `client.task(fn)` or `taskMiddleware()`; returns the way to stop. */
export function onTaskEnd(listener: TaskEndListener): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

/** Tells every listener that `task` ended. A throwing listener does not keep the others from hearing it. */
function taskEnded(task: TaskContext, source: TaskSource): void {
  for (const listener of listeners) {
    try {
      listener(task, source);
    } catch {
      // A listener reports its own failures (a client emits `error`).
    }
  }
}

/**
 * Runs `fn` in a new task, a child one when called inside a task (starting a task is starting a thread): it owns
 * nothing of its parent's, so branches started this way exclude each other. It ends (listeners hear it) when `fn` settles.
 */
export function runInNewTaskReportingEnd<T>(fn: () => Promise<T>): Promise<T> {
  const task = newTaskContext();
  const ended = endingTaskStarted(task, 'task');
  // The end is heard before the caller's continuation runs, in both outcomes (taskEnded never throws).
  return runInTask(task, fn).finally(ended);
}
