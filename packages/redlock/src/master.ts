import type { Redis } from 'ioredis';
import { LockCommands, RedisUnavailableError, monotonicNow, resolveConnection, type RedisInput } from '@org/rlock-core';

/**
 * One independent master: its command connection and the lock scripts on it.
 * Every call is bounded by `commandTimeoutMs` (core's own timer); {@link quick}
 * bounds it further by the per-node timeout (the acquire of a round and the
 * quorum reads, where one slow master must not hold up the rest).
 */
export class Master {
  readonly redis: Redis;
  readonly owned: boolean;
  /** The lock scripts, each call bounded by commandTimeoutMs. */
  readonly commands: LockCommands;
  /** Settles once the first connection attempt has (ready, failed, or timed out). */
  readonly firstConnect: Promise<void>;
  /** How long a round's acquire or a quorum read may take on this master, in ms. */
  readonly perNodeTimeoutMs: number;

  constructor(
    readonly index: number,
    /** Printable name: the URL without credentials, or host:port. */
    readonly name: string,
    input: RedisInput,
    perNodeTimeoutMs: number,
    commandTimeoutMs: number,
  ) {
    const connection = resolveConnection(input);
    this.redis = connection.redis;
    this.owned = connection.owned;
    // A dead master is an expected state for Redlock: its connection errors reach
    // callers as failed votes; this listener only keeps ioredis from logging them.
    if (this.owned) this.redis.on('error', () => undefined);
    this.commands = new LockCommands(this.redis, commandTimeoutMs, commandTimeoutMs);
    this.firstConnect = waitForFirstConnect(this.redis, commandTimeoutMs);
    this.perNodeTimeoutMs = perNodeTimeoutMs;
  }

  /**
   * Runs `call` on this master bounded by the per-node timeout: past it the
   * master counts as failed (RedisUnavailableError). The call itself goes on
   * (bounded by commandTimeoutMs), so callers that change state cancel it.
   * While the connection is down (reconnecting after it was up) nothing is sent
   * and the call fails at once: a dead master costs a round nothing, and no
   * acquire waits in ioredis's offline queue to run long after its round.
   */
  quick<T>(what: string, key: string, call: (commands: LockCommands) => Promise<T>): Promise<T> {
    const status = this.redis.status;
    if (status !== 'ready' && status !== 'wait') {
      const error = new RedisUnavailableError(`master ${this.name} is not connected (${status}): ${what} on "${key}" not sent`);
      notSent.add(error);
      return Promise.reject(error);
    }
    return withinMs(call(this.commands), this.perNodeTimeoutMs, () => {
      return new RedisUnavailableError(`master ${this.name} did not answer ${what} on "${key}" within ${this.perNodeTimeoutMs} ms`);
    });
  }

  /**
   * Closes the connection if rlock created it: QUIT (queued behind every command
   * already sent on it, so their replies still arrive), waited for until
   * `deadline` (monotonic ms), then disconnect. Leaves a given one open.
   */
  async close(deadline: number): Promise<void> {
    if (!this.owned) return;
    const remainingMs = deadline - monotonicNow();
    if (this.redis.status !== 'ready' || remainingMs <= 0) {
      // Down or reconnecting: QUIT would only wait in the offline queue.
      this.redis.disconnect();
      return;
    }
    // Against a frozen master QUIT would wait as long as it stays frozen, hence
    // the bound and the disconnect.
    await withinMs(this.redis.quit(), remainingMs, () => new Error('QUIT timed out')).catch(() => undefined);
    this.redis.disconnect();
  }
}

const notSent = new WeakSet<Error>();

/** True for the failure of a {@link Master.quick} call that was never sent (the master was down): nothing to cancel. */
export function wasNotSent(error: Error | undefined): boolean {
  return error !== undefined && notSent.has(error);
}

/**
 * Bounds `call` by `timeoutMs` on the event loop's terms. When the timer fires,
 * the rejection waits one turn of the loop (setImmediate runs after the I/O
 * poll phase), so a reply that already reached the socket wins: a client whose
 * event loop lagged past the timeout does not count a master that answered in
 * time as failed. Elapsed time still counts against the lease's validity.
 */
export function withinMs<T>(call: Promise<T>, timeoutMs: number, timeoutError: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(timeoutError());
      });
    }, timeoutMs);
    timer.unref();
    call.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * The first round must not count masters as failed only because their
 * connections are still being set up, so rounds wait for this once: ready, an
 * error (a dead master fails fast), or `timeoutMs`.
 */
function waitForFirstConnect(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready' || redis.status === 'wait' || redis.status === 'end') return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      redis.off('ready', done);
      redis.off('error', done);
      redis.off('end', done);
      redis.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    timer.unref();
    redis.once('ready', done);
    redis.once('error', done);
    redis.once('end', done);
    redis.once('close', done);
  });
}
