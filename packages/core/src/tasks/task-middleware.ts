import { newTaskContext, runInTask } from './task-context.js';
import { taskEnded } from './task-end.js';

/** The `(req, res, next)` shape of Express and Connect middleware. */
export type TaskMiddleware = (req: unknown, res: unknown, next: (err?: unknown) => void) => void;

/**
 * Middleware that runs each request in its own task: the counterpart of a servlet
 * container's thread per request, so Java-style service code can call `lock()`
 * and `unlock()` per request. Always a *new* task, even if the server's socket
 * callback somehow carries a store, so two requests never share ownership.
 *
 * When the response closes (`res` emits `close`; a response without events
 * is not watched), the request's task has ended: every client then reports
 * a lock the task still holds and is not releasing (`holdLeaked`, and a
 * process warning `RLOCK_HOLD_LEAKED`). Release before ending the response,
 * or release without awaiting (a release on its way is not a leak).
 *
 * @example
 * app.use(taskMiddleware());
 * app.post('/orders/:id', async (req, res) => { await orderService.place(req.params.id); res.end(); });
 */
export function taskMiddleware(): TaskMiddleware {
  return (_req, res, next) => {
    const task = newTaskContext();
    const response = res as { once?: (event: string, listener: () => void) => unknown } | null;
    if (typeof response?.once === 'function') response.once('close', () => taskEnded(task, 'request'));
    runInTask(task, () => next());
  };
}
