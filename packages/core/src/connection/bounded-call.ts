import type { Cluster, Redis } from 'ioredis';
import { RedisCommandError, RedisUnavailableError, RLockError } from '../errors.js';
import { monotonicNow } from './time.js';

/**
 * Settles like `work`, or rejects with `onTimeout()` once `timeoutMs` passed (unref'd); deferred to the check phase,
 * so a reply read in this turn's poll phase wins and event-loop lag alone causes no timeout.
 */
export function withinMs<T>(work: Promise<T>, timeoutMs: number, onTimeout: () => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    // The first of the outcome and the timeout settles; the other is dropped.
    const first =
      <A>(settle: (arg: A) => void) =>
      (arg: A): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        settle(arg);
      };
    const timer = setTimeout(() => setImmediate(first(() => reject(onTimeout()))), timeoutMs).unref();
    work.then(first(resolve), first(reject));
  });
}

/**
 * Bounds a Redis call by rlock's own timer, whatever ioredis retries: an error reply becomes RedisCommandError naming the key, anything else
 * RedisUnavailableError. A timed-out call may still run later, so state-changing calls carry an operation id.
 */
export function boundedCall<T>(call: () => Promise<T>, timeoutMs: number, what: string, key: string): Promise<T> {
  // A call that throws (a bad argument) fails like one that rejects.
  const pending = new Promise<T>((resolve) => resolve(call()));
  return withinMs(
    pending.catch((error: unknown) => {
      throw toRLockError(error, what, key);
    }),
    timeoutMs,
    () => new RedisUnavailableError(`Redis did not answer ${what} on "${key}" within ${timeoutMs} ms`),
  );
}

export function toRLockError(error: unknown, what: string, key: string): RLockError {
  if (error instanceof RLockError) return error;
  // An error reply (redis-errors' ReplyError), told by name: instanceof fails across module copies.
  if (error instanceof Error && error.name === 'ReplyError') {
    return new RedisCommandError(`Redis refused ${what} on "${key}": ${error.message}`, key, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new RedisUnavailableError(`Redis is unavailable for ${what} on "${key}": ${message}`, { cause: error });
}

/** Closes an owned connection: QUIT (pipelined replies arrive) bounded by `deadline`, as a dead server would keep it queued, then disconnect. */
export async function quitBy(redis: Redis | Cluster, deadline: number, label: string): Promise<void> {
  const remainingMs = deadline - monotonicNow();
  if (redis.status === 'ready' && remainingMs > 0) {
    await boundedCall(() => redis.quit(), Math.ceil(remainingMs), 'QUIT', label).catch(() => undefined);
  }
  redis.disconnect();
}
