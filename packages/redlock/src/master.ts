import type { Redis } from 'ioredis';
import { RedisUnavailableError } from '@org/rlock-core';
import { ChannelHub, ServerLockStore, StandaloneDeployment, withinMs } from '@org/rlock-core/engine';

/**
 * One independent master: core's standalone deployment, the lock's scripts on
 * it (core's store: every call bounded by commandTimeoutMs) and its subscriber
 * hub. {@link quick} bounds a call further by the per-node timeout (a round's
 * acquire and the quorum reads, where one slow master must not hold up the rest).
 */
export class Master {
  readonly deployment: StandaloneDeployment;
  readonly store: ServerLockStore;
  readonly hub: ChannelHub;
  /** Settles once the first connection attempt has (ready, failed, or timed out). */
  readonly firstConnect: Promise<void>;

  constructor(
    readonly index: number,
    /** Printable name: the URL without credentials, or host:port. */
    readonly name: string,
    input: unknown,
    /** How long a round's acquire or a quorum read may take on this master, in ms. */
    readonly perNodeTimeoutMs: number,
    commandTimeoutMs: number,
    hubEvents: { resubscribed(): void },
  ) {
    this.deployment = new StandaloneDeployment(input, commandTimeoutMs);
    this.store = new ServerLockStore(this.deployment, commandTimeoutMs);
    // A dead master is an expected state: waiters fall back to their timers.
    this.hub = new ChannelHub((handlers) => this.deployment.openSubscriber(handlers), commandTimeoutMs, {
      resubscribed: () => hubEvents.resubscribed(),
      error: () => undefined,
    });
    this.firstConnect = this.deployment.firstConnect(commandTimeoutMs);
    // A master whose command connection comes back may make a majority
    // possible again: nothing announces that, so every waiter tries again.
    this.deployment.onReconnect(() => hubEvents.resubscribed());
  }

  get redis(): Redis {
    return this.deployment.redis;
  }

  /** True while the command connection is up (or has not tried yet). */
  get connected(): boolean {
    return this.redis.status === 'ready' || this.redis.status === 'wait';
  }

  /**
   * Runs `call` on this master bounded by the per-node timeout: past it the
   * master counts as failed (RedisUnavailableError). The call itself goes on
   * (bounded by commandTimeoutMs), so callers that change state cancel it.
   * While the connection is down (reconnecting after it was up) nothing is sent
   * and the call fails at once: a dead master costs a round nothing, and no
   * acquire waits in ioredis's offline queue to run long after its round.
   */
  quick<T>(what: string, key: string, call: (store: ServerLockStore) => Promise<T>): Promise<T> {
    if (!this.connected) {
      const error = new RedisUnavailableError(`master ${this.name} is not connected (${this.redis.status}): ${what} on "${key}" not sent`);
      notSent.add(error);
      return Promise.reject(error);
    }
    return withinMs(call(this.store), this.perNodeTimeoutMs, () => {
      return new RedisUnavailableError(`master ${this.name} did not answer ${what} on "${key}" within ${this.perNodeTimeoutMs} ms`);
    });
  }
}

const notSent = new WeakSet<Error>();

/** True for the failure of a {@link Master.quick} call that was never sent (the master was down): nothing to cancel. */
export function wasNotSent(error: Error | undefined): boolean {
  return error !== undefined && notSent.has(error);
}
