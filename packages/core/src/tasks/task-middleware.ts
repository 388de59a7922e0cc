import { newTaskContext, runInTask } from './task-context.js';
import { endingTaskStarted } from './task-end.js';

/** What `taskMiddleware()` needs of a response (node:http's, Express's): its `close` event ends the task. */
export interface TaskResponse {
  /** Calls `listener` once the response is closed (sent, or the connection ended): the request's task ends then. */
  once(event: 'close', listener: () => void): unknown;
}

/** Express/Connect middleware: `res` is watched for `close`; `next()` runs the request in the new task. */
export type TaskMiddleware = (req: unknown, res: TaskResponse, next: () => void) => void;

/**
 * Middleware that runs each request in a new task, so two requests never share ownership; a lock still held
 * without a release on its way when the response closes is reported (`holdLeaked`, warning `RLOCK_HOLD_LEAKED`).
 * @example
 * app.use(taskMiddleware());
 * @example
 * // node:http, no framework
 * const perRequest = taskMiddleware();
 * createServer((req, res) => perRequest(req, res, () => void handle(req, res)));
 */
export function taskMiddleware(): TaskMiddleware {
  return (_req, res, next) => {
    const task = newTaskContext();
    // A caller without types may pass a response without events: it is then not watched.
    const response = res as Partial<TaskResponse> | null | undefined;
    if (typeof response?.once === 'function') response.once('close', endingTaskStarted(task, 'request'));
    runInTask(task, () => next());
  };
}
