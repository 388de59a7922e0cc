import type { Cluster, Redis } from 'ioredis';
import { RedisUnavailableError } from '../errors.js';

/** Whether a connection is down (refused or reset until ready again), so calls fail at once, not at their timeout in the offline queue. */
export class DownTracker {
  private downCause: Error | undefined;
  private readonly waiting = new Set<(cause: Error) => void>();

  constructor(
    private readonly connection: Redis | Cluster,
    /** Told each time the connection is found down or closes: fail what is pending on it. */
    onDown?: (cause: Error) => void,
  ) {
    // A reset reports its error while the connection still counts as ready: it becomes the cause of the close that follows.
    let lastError: Error | undefined;
    connection.on('ready', () => {
      this.downCause = undefined;
      lastError = undefined;
    });
    connection.on('error', (error: Error & { code?: unknown }) => {
      if (typeof error.code !== 'string') return;
      lastError = error;
      if (connection.status === 'ready') return;
      this.downCause = error;
      this.fail(error, onDown);
    });
    // A call written to a closed connection is never answered (no auto-resend), so it fails now; later ones wait in the offline queue.
    connection.on('close', () => this.fail(lastError ?? new Error('Connection closed'), onDown));
  }

  private fail(cause: Error, onDown: ((cause: Error) => void) | undefined): void {
    for (const fail of this.waiting) fail(cause);
    this.waiting.clear();
    onDown?.(cause);
  }

  /** Why the connection is down, or undefined when it is not known down. */
  get cause(): Error | undefined {
    return this.connection.status === 'ready' ? undefined : this.downCause;
  }

  /** Runs `call`, or rejects with RedisUnavailableError as soon as the connection is found down. */
  run<T>(call: () => Promise<T>, what: string, key: string): Promise<T> {
    const down = this.cause;
    if (down) return Promise.reject(unavailableError(what, key, down));
    return new Promise<T>((resolve, reject) => {
      const fail = (cause: Error): void => reject(unavailableError(what, key, cause));
      this.waiting.add(fail);
      void call()
        .then(resolve, reject)
        .finally(() => this.waiting.delete(fail));
    });
  }
}

export function unavailableError(what: string, key: string, cause: Error): RedisUnavailableError {
  return new RedisUnavailableError(`Redis is unavailable for ${what} on "${key}": ${cause.message}`, { cause });
}
