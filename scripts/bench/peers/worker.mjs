// @ts-check
/**
 * Entry of a bench worker process (forked by runWorkers in workers.mjs, which
 * describes the protocol). Kept apart from workers.mjs so the scenario module
 * it imports can import workers.mjs without an import cycle through this
 * still-evaluating entry.
 */
import { describeError } from './workers.mjs';

process.on('disconnect', () => process.exit(2)); // parent gone
/** @type {string | undefined} */
let unhandled;
// A library's stray rejection (e.g. a retry timer firing after close) is
// reported with the result instead of killing the worker.
process.on('unhandledRejection', (reason) => {
  unhandled ??= describeError(reason);
});
const job = /** @type {import('./workers.mjs').WorkerJob} */ (JSON.parse(/** @type {string} */ (process.env.RLOCK_BENCH_JOB)));
const index = Number(process.argv[2]);
const ready = () =>
  new Promise((resolve) => {
    process.once('message', resolve);
    process.send?.({ type: 'ready' });
  });
/** @type {{ type: string, value?: unknown, error?: string }} */
let message;
try {
  const module = await import(job.module);
  const value = await module[job.fn](job.config, index, ready);
  message = { type: 'result', value: unhandled && value && typeof value === 'object' ? { ...value, unhandled } : value };
} catch (error) {
  message = { type: 'error', error: describeError(error) };
}
process.removeAllListeners('disconnect');
process.send?.(message, () => process.exit(0));
