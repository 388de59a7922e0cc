import { runInNewTask } from './task-context.js';

/** The `(req, res, next)` shape of Express and Connect middleware. */
export type TaskMiddleware = (req: unknown, res: unknown, next: (err?: unknown) => void) => void;

/**
 * Middleware that runs each request in its own task: the counterpart of a servlet
 * container's thread per request, so Java-style service code can call `lock()`
 * and `unlock()` per request. Always a *new* task, even if the server's socket
 * callback somehow carries a store, so two requests never share ownership.
 *
 * @example
 * app.use(taskMiddleware());
 * app.post('/orders/:id', async (req, res) => { await orderService.place(req.params.id); res.end(); });
 */
export function taskMiddleware(): TaskMiddleware {
  return (_req, _res, next) => {
    runInNewTask(() => next());
  };
}
