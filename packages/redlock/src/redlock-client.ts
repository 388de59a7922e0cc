import type { RLock } from '@org/rlock-core';
import { EngineClient, ReentrantLock, checkName, connectionNameOf, type QueueSubscription, type WaitQueue } from '@org/rlock-core/internal';
import { Master } from './master.js';
import { MasterSet } from './master-set.js';
import { resolveRedlockOptions, type RedlockClientOptions, type ResolvedRedlockOptions } from './options.js';
import { QuorumLockStore } from './quorum-lock-store.js';
import { holderLookup } from './holder-lookup.js';

/**
 * A Redlock client: core's `ReentrantLock` over a quorum store of lease-lock masters.
 *
 * @example
 * const redlock = new RedlockClient({ masters: [url1, url2, url3], renewer: createWatchdog() });
 * await redlock.getLock('report:daily').withLock(async ({ signal }) => { … });
 * await redlock.close();
 */
export class RedlockClient extends EngineClient {
  /** The client's options, checked, with every default filled in. */
  readonly options: ResolvedRedlockOptions;
  /** Votes a round needs: ⌊N/2⌋ + 1. */
  readonly quorum: number;
  private readonly masters: readonly Master[];
  private readonly store: QuorumLockStore;

  /** @throws InvalidArgumentError listing every bad option, before connecting. */
  constructor(options: RedlockClientOptions) {
    const resolved = resolveRedlockOptions(options, 'RedlockClient');
    super(resolved);
    this.options = resolved;
    const { commandTimeoutMs, perNodeTimeoutMs, driftFactor, watchdogTimeoutMs } = resolved;
    const wakeAll = (): void => this.context.queues.wakeAll('resubscribed');
    let set: MasterSet | undefined;
    const identified = (): void => {
      set?.identified(); // quarantines change, and the master may vote again
      wakeAll();
    };
    const created: Master[] = [];
    const connectionName = connectionNameOf(this.clientId, this.identity);
    try {
      resolved.masters.forEach((input, index) => {
        created.push(new Master(index, resolved.masterNames[index] as string, input, commandTimeoutMs, { resubscribed: wakeAll, identified }, connectionName));
      });
    } catch (error) {
      for (const master of created) if (master.deployment.owned) master.redis.disconnect();
      throw error;
    }
    this.masters = created;
    // As the single-server client: idle, the masters' connections (and their subscribers) let the process end.
    if (resolved.unrefWhenIdle) for (const master of created) master.deployment.unrefWhenIdle(this.work);
    set = new MasterSet(created, driftFactor, perNodeTimeoutMs, this.context.background, commandTimeoutMs, resolved.restartQuarantineMs, (error) =>
      this.reportError(error),
    );
    set.identified();
    this.quorum = set.quorum;
    this.store = new QuorumLockStore(set, driftFactor, resolved.retry, commandTimeoutMs, Math.max(1, Math.floor(watchdogTimeoutMs / 3)));
    this.context.kinds.register(this.store.kind, this.store);
    this.context.holderOf = holderLookup(created, resolved.keyPrefix, commandTimeoutMs);
    for (const master of created) this.watchEviction(master.deployment, commandTimeoutMs);
    // A master back after a disconnect may have lost its grants: check now.
    for (const master of created) {
      master.deployment.transport.publishRefused = (refusal, what, key) => this.reportPublishRefused(refusal, what, key);
      master.deployment.onReconnect(() => {
        this.context.renewer?.renewNow?.();
        this.context.background.retryNow();
      });
    }
    this.startRenewer(resolved);
  }

  /** Printable names of the masters, in order (URLs without credentials, or host:port). */
  get masterNames(): readonly string[] {
    return this.options.masterNames;
  }

  /**
   * The reentrant Redlock lock `name`. Its fencing token is `undefined`: see the README.
   * @throws InvalidArgumentError (synchronously) for an empty name, one over 1,024 bytes, or one with braces.
   * @throws ClientClosedError (synchronously) once the client is closed.
   */
  getLock(name: string): RLock<undefined> {
    checkName(name);
    this.assertOpen();
    return new ReentrantLock<undefined>(name, this.context, this.store);
  }

  protected subscribeQueue(queue: WaitQueue): QueueSubscription {
    return this.store.subscribe(queue);
  }

  protected closeSubscribers(): void {
    this.store.dropParked();
    for (const master of this.masters) master.hub.close();
  }

  protected async closeConnections(deadline: number): Promise<void> {
    await Promise.all(this.masters.map((master) => master.deployment.close(deadline)));
  }
}
