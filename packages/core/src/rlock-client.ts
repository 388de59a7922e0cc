import { nanoid } from 'nanoid';
import type { Redis } from 'ioredis';
import { LockClientBase, type CloseReport } from './lock-client-base.js';
import { resolveClientOptions, type RLockClientOptions, type ResolvedClientOptions } from './client-options.js';
import { ClientClosedError, type LockLostError } from './errors.js';
import type { Hold, HoldObserver } from './hold.js';
import { HoldRegistry } from './hold-registry.js';
import type { LeaseRenewer } from './lease-renewal.js';
import type { LockBackend } from './lock-backend.js';
import { LockCommands } from './lock-commands.js';
import { checkLockName } from './lock-keys.js';
import type { LockRuntime } from './lock-runtime.js';
import type { RLock } from './lock-types.js';
import { resolveConnection } from './redis-connection.js';
import { boundedCall } from './redis-errors.js';
import { ReentrantLock } from './reentrant-lock.js';
import { ReleaseSubscriber } from './release-subscriber.js';
import { SingleServerRenewal } from './single-server-renewal.js';

/**
 * A client of one Redis: makes locks, runs tasks, renews leases through its
 * renewer and reports what happens to holds through typed events.
 *
 * @example
 * const client = new RLockClient({ redis: 'redis://127.0.0.1:6379', renewer: createWatchdog() });
 * await client.getLock('order:42').withLock(async ({ token }) => { … });
 */
export class RLockClient extends LockClientBase {
  /** Unguessable id of this client: the first half of every owner id. */
  readonly clientId = nanoid();
  readonly options: ResolvedClientOptions;
  readonly redis: Redis;
  private readonly ownsConnection: boolean;
  private readonly runtime: LockRuntime;
  private readonly registry = new HoldRegistry();
  private readonly subscriber: ReleaseSubscriber;
  private readonly renewer: LeaseRenewer | undefined;
  private readonly commands: LockCommands;

  /** @throws InvalidArgumentError for a bad option, before connecting. */
  constructor(options: RLockClientOptions) {
    super();
    this.options = resolveClientOptions(options);
    const connection = resolveConnection(this.options.redis);
    this.redis = connection.redis;
    this.ownsConnection = connection.owned;
    // Connection errors surface as typed errors of the calls; the listener keeps
    // ioredis from printing them as unhandled.
    if (this.ownsConnection) this.redis.on('error', () => undefined);
    const { commandTimeoutMs, watchdogTimeoutMs } = this.options;
    this.commands = new LockCommands(this.redis, commandTimeoutMs, commandTimeoutMs);
    this.subscriber = new ReleaseSubscriber(this.redis, commandTimeoutMs, (error) => this.reportError(error));
    this.renewer = this.options.renewer?.(new SingleServerRenewal(this.commands), {
      renewed: (count) => this.emitSafely('lockRenewed', { count }),
      error: (error) => this.reportError(error),
    });
    this.runtime = this.makeRuntime(this.commands, Math.max(1, Math.floor(watchdogTimeoutMs / 3)));
  }

  /**
   * The reentrant lock `name`.
   * @throws InvalidArgumentError (synchronously) for an empty name, one over 1,024 bytes, or one with braces.
   */
  getLock(name: string): RLock {
    return new ReentrantLock(checkLockName(name), this.runtime);
  }

  /**
   * Rejects waiters with ClientClosedError, stops renewal, aborts the signals of
   * the holds still held (reason `closed`) and releases them best-effort within
   * commandTimeoutMs. Leaves a connection it was given open. Idempotent.
   */
  protected async shutdown(): Promise<CloseReport> {
    await this.subscriber.close(new ClientClosedError());
    await this.renewer?.close();
    // Acquires in flight may still be granted: each undoes a grant that comes
    // after close began, inside its own slot, before the holds are released and
    // the connection quits. Bounded: every call is.
    await Promise.allSettled(this.registry.inFlight());
    await Promise.allSettled(this.registry.inFlight()); // the undos those queued
    const holds = this.registry.all().filter((hold) => hold.active);
    const report: CloseReport = { released: [], failed: [] };
    await Promise.all(
      holds.map(async (hold) => {
        try {
          hold.lose('closed');
          const reply = await this.commands.release(hold.keys, { owner: hold.owner, op: nanoid(), all: true, token: hold.token });
          (reply.released ? report.released : report.failed).push(hold.name);
        } catch {
          report.failed.push(hold.name);
        }
      }),
    );
    if (this.ownsConnection) {
      // QUIT lets pipelined replies arrive; against a dead server it would sit in
      // the offline queue forever, so it is bounded and followed by a disconnect
      // that also stops reconnecting.
      await boundedCall(() => this.redis.quit(), this.options.commandTimeoutMs, 'QUIT', '(connection)').catch(() => undefined);
      this.redis.disconnect();
    }
    return report;
  }

  private makeRuntime(backend: LockBackend, maxSleepMs: number): LockRuntime {
    const client = this;
    const observer: HoldObserver = {
      startRenewal: (hold) => this.renewer?.add(hold),
      stopRenewal: (hold) => this.renewer?.remove(hold),
      lost: (hold, error) => this.onLost(hold, error),
    };
    return {
      clientId: this.clientId,
      keyPrefix: this.options.keyPrefix,
      watchdogTimeoutMs: this.options.watchdogTimeoutMs,
      maxSleepMs,
      canRenew: this.renewer !== undefined,
      backend,
      subscriber: this.subscriber,
      registry: this.registry,
      holdObserver: observer,
      get closed() {
        return client.isClosing;
      },
      assertOpen: () => this.assertOpen(),
      // Payloads are built only for listeners: these run twice per lock/unlock pair.
      acquired: (hold) => {
        if (this.listenerCount('lockAcquired') > 0) {
          this.emitSafely('lockAcquired', { name: hold.name, owner: hold.owner, token: hold.token, count: hold.count });
        }
      },
      released: (hold) => {
        if (this.listenerCount('lockReleased') > 0) {
          this.emitSafely('lockReleased', { name: hold.name, owner: hold.owner, token: hold.token });
        }
      },
      backgroundError: (error) => this.reportError(error),
    };
  }

  private onLost(hold: Hold, error: LockLostError): void {
    this.emitSafely('lockLost', { name: hold.name, owner: hold.owner, token: hold.token, reason: error.reason, error });
    // A lease we could not renew in time may still stand on the server; clear it
    // if it is still ours (same owner and token) so waiters need not sit out its TTL.
    if (error.reason === 'unreachable' && !this.isClosing) {
      this.registry
        .serialize(hold.key, hold.owner, () =>
          this.commands.release(hold.keys, { owner: hold.owner, op: nanoid(), all: true, token: hold.token }),
        )
        .catch(() => undefined);
    }
  }
}
