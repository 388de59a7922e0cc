import { RedisCommandError, RedisUnavailableError, RLockError } from './errors.js';

/**
 * Bounds a Redis call by rlock's own timer, whatever ioredis's retry and
 * offline-queue settings are, and turns its failures into typed errors:
 * an error reply (WRONGTYPE, NOSCRIPT that could not be repaired, OOM…)
 * becomes RedisCommandError naming the full key; everything else (timeout,
 * closed connection, retries exhausted) becomes RedisUnavailableError.
 *
 * A call that timed out may still run later (ioredis resends queued commands
 * after a reconnect): callers that change state pair every call with an
 * operation id, so a late or replayed call cannot count twice.
 */
export function boundedCall<T>(call: () => Promise<T>, timeoutMs: number, what: string, key: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    // The rejection waits for the check phase: a reply already in the socket is
    // read in this loop iteration's poll phase and wins, so event-loop lag alone
    // (a busy process) does not turn answered calls into timeouts.
    const timer = setTimeout(() => {
      setImmediate(() => reject(new RedisUnavailableError(`Redis did not answer ${what} on "${key}" within ${timeoutMs} ms`)));
    }, timeoutMs);
    // The pending command keeps its connection (and so the process) busy; this
    // timer alone must not keep a finished program alive.
    timer.unref();
    let pending: Promise<T>;
    try {
      pending = call();
    } catch (error) {
      clearTimeout(timer);
      reject(toRLockError(error, what, key));
      return;
    }
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(toRLockError(error, what, key));
      },
    );
  });
}

/** Classifies an ioredis failure. */
export function toRLockError(error: unknown, what: string, key: string): RLockError {
  if (error instanceof RLockError) return error;
  if (isReplyError(error)) {
    return new RedisCommandError(`Redis refused ${what} on "${key}": ${error.message}`, key, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new RedisUnavailableError(`Redis is unavailable for ${what} on "${key}": ${message}`, { cause: error });
}

// ioredis's ReplyError (from redis-errors) is an error *reply* from the server;
// its name survives across module copies where instanceof would not.
function isReplyError(error: unknown): error is Error {
  return error instanceof Error && error.name === 'ReplyError';
}
