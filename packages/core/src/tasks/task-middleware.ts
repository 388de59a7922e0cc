import { newTaskContext, runInTask } from './task-context.js';
import { taskEnded } from './task-end.js';

/**
 * What `taskMiddleware()` needs of a response: its `close` event, which tells
 * that the request's task has ended. node:http's `ServerResponse` emits it
 * when the response is sent or its connection drops, and so do Express's and
 * Connect's responses, which are `ServerResponse`s.
 */
export interface TaskResponse {
  /** Calls `listener` once the response is closed (sent, or the connection ended): the request's task ends then. */
  once(event: 'close', listener: () => void): unknown;
}

/**
 * The `(req, res, next)` shape of Express and Connect middleware, as much of
 * it as `taskMiddleware()` uses: `req` is not read, `res` is watched for
 * `close`, and `next()` runs the rest of the request in the new task. With
 * plain node:http, call it from the request listener and handle the request
 * in `next`.
 */
export type TaskMiddleware = (req: unknown, res: TaskResponse, next: () => void) => void;

/**
 * Middleware that runs each request in its own task: the counterpart of a servlet
 * container's thread per request, so Java-style service code can call `lock()`
 * and `unlock()` per request. Always a *new* task, even if the server's socket
 * callback somehow carries a store, so two requests never share ownership.
 *
 * When the response closes (`res` emits `close`), the request's task has
 * ended: every client then reports a lock the task still holds and is not
 * releasing (`holdLeaked`, and a process warning `RLOCK_HOLD_LEAKED`).
 * Release before ending the response, or release without awaiting (a
 * release on its way is not a leak).
 *
 * @example
 * app.use(taskMiddleware());
 * app.post('/orders/:id', async (req, res) => { await orderService.place(req.params.id); res.end(); });
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
    if (typeof response?.once === 'function') response.once('close', () => taskEnded(task, 'request'));
    runInTask(task, () => next());
  };
}
