// @ts-check
/**
 * Every measured run of a library happens in fresh forked processes (one for
 * S1, S3 and the limits, four for S2), so no library inherits another's heap,
 * JIT state, timers or connections, and a library that hangs or crashes costs
 * its own row, not the run. The parent forks `count` workers of worker.mjs;
 * each imports `module`, calls its export `fn(config, index, ready)`, where
 * `ready()` resolves once every worker has called it (a start barrier), and
 * sends back what `fn` returned. A worker exits right after reporting, so
 * retry timers a library leaves behind do not keep it alive.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('worker.mjs', import.meta.url));

/**
 * @typedef {object} WorkerJob
 * @property {string} module file URL of the module exporting `fn`
 * @property {string} fn
 * @property {unknown} config JSON-serialisable
 */

/**
 * Forks `count` workers running `job`, starts them together and returns their
 * results in index order. Rejects if a worker fails or the time limit passes
 * (every worker is killed then).
 * @param {WorkerJob & { count: number, timeoutMs: number }} job
 * @returns {Promise<any[]>}
 */
export async function runWorkers({ count, timeoutMs, ...job }) {
  const children = Array.from({ length: count }, (_, index) =>
    fork(WORKER, [String(index)], {
      env: { ...process.env, RLOCK_BENCH_JOB: JSON.stringify(job) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  try {
    let ready = 0;
    return await Promise.race([
      Promise.all(
        children.map(
          (child, index) =>
            new Promise((resolve, reject) => {
              /** @type {{ ok: boolean, value?: unknown, error?: string } | undefined} */
              let outcome;
              child.on('message', (/** @type {any} */ message) => {
                if (message?.type === 'ready' && ++ready === count) for (const c of children) c.send({ type: 'start' });
                if (message?.type === 'result') outcome = { ok: true, value: message.value };
                if (message?.type === 'error') outcome = { ok: false, error: message.error };
              });
              child.on('error', reject);
              // 'close', not 'exit': a child's last IPC message can arrive after its 'exit' event.
              child.on('close', (code, signal) => {
                if (outcome?.ok) resolve(outcome.value);
                else reject(new Error(outcome?.error ?? `worker ${index} exited with ${signal ?? `code ${code}`} before reporting`));
              });
            }),
        ),
      ),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no result within ${Math.round(timeoutMs / 1000)} s: workers killed`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/**
 * Whether every loop of a worker ended by `deadline` (performance.now() ms):
 * false when one still runs then (a stall), so the worker reports instead of hanging.
 * @param {readonly Promise<unknown>[]} loops @param {number} deadline
 */
export async function settledBy(loops, deadline) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  try {
    return await Promise.race([
      Promise.all(loops).then(() => true),
      new Promise((resolve) => {
        timer = setTimeout(() => resolve(false), Math.max(0, deadline - performance.now()));
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** @param {unknown} error */
export function describeError(error) {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (cause: ${error.cause.message})` : '';
    return `${error.name}: ${error.message}${cause}`;
  }
  return String(error);
}
