import type { Redis } from 'ioredis';
import { RedisUnavailableError } from '../errors.js';

/**
 * Fails the calls waiting on a connection, and every later one until it is
 * ready again, as soon as its socket is refused or reset (the socket error as
 * cause), rather than leave them in ioredis's offline queue until the timeout.
 */
export class FailWhileDown {
  private down: Error | undefined;
  private readonly waiting = new Set<(cause: Error) => void>();

  constructor(private readonly connection: Redis) {
    connection.on('ready', () => {
      this.down = undefined;
    });
    connection.on('error', (error: Error & { code?: unknown }) => {
      if (typeof error.code !== 'string' || connection.status === 'ready') return;
      this.down = error;
      for (const fail of this.waiting) fail(error);
      this.waiting.clear();
    });
  }

  /** Runs `call`, or rejects with RedisUnavailableError as soon as the connection is found down. */
  run<T>(call: () => Promise<T>, what: string, key: string): Promise<T> {
    const unavailable = (cause: Error): RedisUnavailableError =>
      new RedisUnavailableError(`Redis is unavailable for ${what} on "${key}": ${cause.message}`, { cause });
    if (this.down && this.connection.status !== 'ready') return Promise.reject(unavailable(this.down));
    return new Promise<T>((resolve, reject) => {
      const fail = (cause: Error): void => reject(unavailable(cause));
      this.waiting.add(fail);
      call().then(
        (value) => {
          this.waiting.delete(fail);
          resolve(value);
        },
        (error: unknown) => {
          this.waiting.delete(fail);
          reject(error);
        },
      );
    });
  }
}
