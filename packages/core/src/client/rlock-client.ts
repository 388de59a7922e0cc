import type { Cluster, Redis } from 'ioredis';
import type { Deployment } from '../connection/deployment.js';
import { createDeployment } from '../connection/create-deployment.js';
import { ChannelHub } from '../engine/channel-hub.js';
import { EngineClient } from './engine-client.js';
import type { QueueSubscription, WaitQueue } from '../engine/wait-queue.js';
import { resolveClientOptions, type RLockClientOptions, type ResolvedClientOptions } from './client-options.js';
import type { MultiLock } from '../objects/multi-lock/multi-lock.js';
import type { RReadWriteLock } from '../objects/rw-lock/read-write-lock.js';
import type { RLock } from '../objects/lock/types.js';
import type { SpinLockOptions } from '../objects/spin-lock/options.js';
import { clientNoticeChannel } from '../objects/names.js';
import { readForcedNotice } from '../objects/messages.js';
import type { Hold } from '../engine/hold.js';
import { MAX_INSPECT_LIMIT } from './inspect-types.js';
import { SCRIPTS } from '../objects/scripts.generated.js';
import type { RSemaphore } from '../objects/semaphore/types.js';
import type { RPermitExpirableSemaphore } from '../objects/permit-semaphore/types.js';
import type { RCountDownLatch } from '../objects/latch/types.js';
import { COMPOSITE_KINDS, KINDS, type CompositeName, type KindGetter, type KindName } from '../objects/kinds.js';
import { Inspector } from './inspector.js';
import type { LeaderElection } from '../objects/leader/leader-election.js';
import type { CompositeSite } from '../objects/object-kind.js';
import type { InspectOptions, ListOptions, ObjectInfo } from './inspect-types.js';
import { ClientDirectory, connectionNameOf, HOLDER_LOOKUP_MS } from '../connection/client-names.js';
import { withinMs } from '../connection/bounded-call.js';
import { timeoutHolderOf, withHolderClients } from './holder-clients.js';

/**
 * A client of one Redis deployment: makes the coordination objects, runs tasks, renews leases and reports holds through typed events.
 * @example
 * const client = new RLockClient({ redis: 'redis://127.0.0.1:6379', renewer: createWatchdog() });
 * await client.getLock('order:42').withLock(async ({ token }) => { … });
 */
export class RLockClient extends EngineClient {
  /** The client's options, checked, with every default filled in. */
  readonly options: ResolvedClientOptions;
  private readonly deployment: Deployment;
  private readonly hub: ChannelHub;
  /** Each kind's getter, made once with the kind's per-client state: the registered kinds', then the composite kinds'. */
  private readonly getters = new Map<KindName | CompositeName, unknown>();
  private readonly inspector: Inspector;
  /** Finds holders' clients by the names of their connections. */
  private readonly directory: ClientDirectory;
  /** The client listens on its notice channel (from its first hold's acquire on; again after a failed SUBSCRIBE). */
  private hearingNotices = false;
  /** The notice channel's subscription until it is acknowledged or failed: a hold's acquire waits for it. */
  private noticesPending: Promise<void> | undefined;

  /** @throws InvalidArgumentError listing every bad option, before connecting. */
  constructor(options: RLockClientOptions) {
    const resolved = resolveClientOptions(options);
    super(resolved);
    this.options = resolved;
    const connectionName = connectionNameOf(this.clientId, this.identity);
    this.deployment = createDeployment(resolved.redis, { ...resolved, scripts: Object.values(SCRIPTS), connectionName });
    this.inspector = new Inspector(this.deployment.transport, resolved.keyPrefix, () => this.assertOpen());
    this.directory = new ClientDirectory(
      (key) => this.deployment.clientList(key),
      (key) => this.deployment.serverOf(key),
    );
    const lookupMs = Math.min(HOLDER_LOOKUP_MS, resolved.commandTimeoutMs);
    this.context.holderOf = (name) => withinMs(this.inspect(name, { limit: 1 }).then(timeoutHolderOf), lookupMs, () => undefined).catch(() => undefined);
    this.context.holdInRedis = (hold) => this.holdInRedis(hold);
    this.context.noticesReady = () => this.noticesReady();
    this.deployment.transport.publishRefused = (refusal, what, key) => this.reportPublishRefused(refusal, what, key);
    if (resolved.unrefWhenIdle) this.deployment.unrefWhenIdle(this.work);
    this.hub = new ChannelHub((handlers) => this.deployment.openSubscriber(handlers), resolved.commandTimeoutMs, {
      resubscribed: () => this.context.queues.wakeAll('resubscribed'),
      error: (error) => this.reportError(error),
    });
    const site: CompositeSite = {
      deployment: this.deployment,
      context: this.context,
      assertOpen: () => this.assertOpen(),
      getterOf: <Getter>(kind: { readonly name: string }): Getter => {
        const getter = this.getters.get(kind.name as KindName);
        if (getter === undefined) throw new Error(`a composite kind uses kind ${kind.name}, which is not registered`);
        return getter as Getter;
      },
      // A composite names a registered kind; inspect() refuses any other.
      inspect: (name, options) => this.inspect(name, options as InspectOptions),
    };
    for (const kind of [...KINDS, ...COMPOSITE_KINDS]) this.getters.set(kind.name, kind.getter(site));
    this.startRenewer(resolved);
    this.watchEviction(this.deployment, resolved.commandTimeoutMs);
    // Back after a disconnect: the server may have lost holds (a restart without persistence), so check them now.
    this.deployment.onReconnect(() => {
      this.context.renewer?.renewNow?.();
      this.context.background.retryNow();
    });
  }

  /** The command connection (given, or made from the options): one Redis, or a Cluster. */
  get redis(): Redis | Cluster {
    return this.deployment.redis;
  }

  /**
   * The reentrant lock `name`.
   * @throws InvalidArgumentError (synchronously) for an empty name, one over 1,024 bytes or one with braces; ClientClosedError once closed.
   */
  getLock(name: string): RLock<string> {
    return this.getter('lock')(name);
  }

  /**
   * The fair lock `name`: the RLock interface, with waiters from every client and process served in arrival order.
   * @throws InvalidArgumentError (synchronously) for a bad name; ClientClosedError once closed.
   */
  getFairLock(name: string): RLock<string> {
    return this.getter('fairLock')(name);
  }

  /**
   * The read-write lock `name`: `readLock()` shared, `writeLock()` exclusive, both reentrant per task.
   * @throws InvalidArgumentError (synchronously) for a bad name; ClientClosedError once closed.
   */
  getReadWriteLock(name: string): RReadWriteLock {
    return this.getter('readWriteLock')(name);
  }

  /**
   * One lock over locks of any kind and client (Redlock too), all or nothing, taken in key order so two multi-locks never deadlock.
   * @throws InvalidArgumentError (synchronously) for an empty list or a member that is not a lock.
   */
  getMultiLock(locks: readonly RLock<string | undefined>[]): MultiLock {
    return this.getter('multiLock')(locks);
  }

  /**
   * The semaphore `name`: permits are not owned, so a crashed holder's are gone for good (see getPermitExpirableSemaphore).
   * @throws InvalidArgumentError (synchronously) for a bad name; ClientClosedError once closed.
   */
  getSemaphore(name: string): RSemaphore {
    return this.getter('semaphore')(name);
  }

  /**
   * The permit-expirable semaphore `name`: leased permits with ids, tokens and signals.
   * @throws InvalidArgumentError (synchronously) for a bad name; ClientClosedError once closed.
   */
  getPermitExpirableSemaphore(name: string): RPermitExpirableSemaphore {
    return this.getter('permitExpirableSemaphore')(name);
  }

  /** The count-down latch `name`. @throws InvalidArgumentError (synchronously) for a bad name; ClientClosedError once closed. */
  getCountDownLatch(name: string): RCountDownLatch {
    return this.getter('countDownLatch')(name);
  }

  /**
   * The state of object `name` as Redis has it, in one read-only script call; undefined when the object has no key.
   * @throws InvalidArgumentError for a bad name or option (before any command), ClientClosedError, RedisUnavailableError, RedisCommandError
   * @example
   * const info = await client.inspect('order:42');
   * if (info?.kind === 'lock') console.log(info.holders[0]?.owner, info.ttlMs);
   */
  async inspect(name: string, options?: InspectOptions): Promise<ObjectInfo | undefined> {
    return withHolderClients(await this.inspector.inspect(name, options), this.directory);
  }

  /**
   * Pages of the objects whose names match `match`, found with SCAN on every master (never KEYS), each read as by {@link RLockClient.inspect}.
   * @throws InvalidArgumentError for a bad option (on the first page).
   * @example
   * for await (const page of client.list({ match: 'order:*', limit: 100 })) {
   *   for (const info of page) console.log(info.name, info.kind, info.holderCount);
   * }
   */
  async *list(options?: ListOptions): AsyncGenerator<ObjectInfo[], void, undefined> {
    for await (const page of this.inspector.list(options)) {
      yield (await Promise.all(page.map((info) => withHolderClients(info, this.directory)))) as ObjectInfo[];
    }
  }

  /**
   * The leader election `name`: one leader at a time, the holder of lock `name` under a watchdog lease, its epoch the fencing token.
   * @throws InvalidArgumentError (synchronously) for a bad name; ClientClosedError once closed.
   * @example
   * const leader = await client.getLeaderElection('scheduler').elect({ signal });
   * leader.signal.addEventListener('abort', stopScheduling);
   */
  getLeaderElection(name: string): LeaderElection {
    return this.getter('leaderElection')(name);
  }

  /**
   * The non-reentrant lock `name`: its holder's task asking again, from any branch, is refused like another task (a nested `lock()` waits for ever).
   * It shares `getLock(name)`'s keys: use one kind per name.
   * @throws InvalidArgumentError (synchronously) for a bad name; ClientClosedError once closed.
   */
  getNonReentrantLock(name: string): RLock<string> {
    return this.getter('nonReentrantLock')(name);
  }

  /**
   * The spin lock `name` (Redisson's `RSpinLock`): the lock, whose waiters never subscribe but try again after jittered,
   * exponentially growing delays (`options`). It is `getLock(name)`'s lock: same keys, holds and tokens.
   * @throws InvalidArgumentError (synchronously) for a bad name or option; ClientClosedError once closed.
   * @example
   * const lock = client.getSpinLock('report:7', { maxDelayMs: 64 });
   * await lock.withLock(() => buildReport());
   */
  getSpinLock(name: string, options?: SpinLockOptions): RLock<string> {
    return this.getter('spinLock')(name, options);
  }

  /**
   * The non-reentrant fair lock `name`: the fair lock's order across every client, and its holder's task asking again waits in that order like another task.
   * It shares `getFairLock(name)`'s keys: use one kind per name.
   * @throws InvalidArgumentError (synchronously) for a bad name; ClientClosedError once closed.
   */
  getNonReentrantFairLock(name: string): RLock<string> {
    return this.getter('nonReentrantFairLock')(name);
  }

  /** The getter of kind `name`; public getters are written out for their docs (a mapped type would show none). */
  private getter<Name extends KindName | CompositeName>(name: Name): KindGetter<Name> {
    return this.getters.get(name) as KindGetter<Name>;
  }

  /**
   * Before the first hold is sent, subscribes to the channel where a force-unlock tells holders: a hold's acquire goes out once
   * the subscription is acknowledged (or failed), so a force-unlock of any grant is heard. Undefined once heard.
   */
  private noticesReady(): Promise<void> | undefined {
    if (this.hearingNotices || this.isClosing) return this.noticesPending;
    const subscription = this.hub.subscribe(clientNoticeChannel(this.options.keyPrefix, this.clientId), (payload) => this.onNotice(payload), true);
    this.hearingNotices = true;
    // An acquire waits on it: the connections keep the process alive meanwhile.
    this.work.enter();
    const settle = (): void => {
      this.work.leave();
      if (this.noticesPending === pending) this.noticesPending = undefined;
    };
    const pending = subscription.ready.then(settle, (error: unknown) => {
      // Missed notices cost only promptness: the renewal still finds the hold gone. The next hold subscribes again.
      subscription.close();
      this.hearingNotices = false;
      if (!this.isClosing) this.reportError(error);
      settle();
    });
    return (this.noticesPending = pending);
  }

  /** "forced <owner> <token> <key>" (force-notice.lua): Redis is asked whether that hold of this client is gone; anything else is dropped. */
  private onNotice(payload: string): void {
    const notice = readForcedNotice(payload, this.clientId, this.options.keyPrefix);
    if (notice === undefined) this.noticesDropped++;
    else this.context.forced(notice.key, notice.owner, notice.token);
  }

  /** Whether Redis still has `hold` (read as `inspect` reads it): undefined when the read failed or did not list every holder. */
  private async holdInRedis(hold: Hold): Promise<'held' | 'gone' | 'taken' | undefined> {
    try {
      const info = await this.inspector.inspect(hold.name, { limit: MAX_INSPECT_LIMIT });
      if (info === undefined) return 'gone';
      // Permits are never forced; a holder list cut by the limit cannot tell.
      if (info.kind === 'permitExpirableSemaphore' || info.holderCount > info.holders.length) return undefined;
      if (info.holders.some((holder) => holder.owner === hold.owner && holder.token === hold.token)) return 'held';
      return info.holders.length === 0 ? 'gone' : 'taken';
    } catch {
      return undefined;
    }
  }

  protected subscribeQueue(queue: WaitQueue): QueueSubscription {
    return this.hub.subscribe(queue.channel, (payload) => queue.hear(payload));
  }

  protected closeSubscribers(): void {
    this.hub.close();
  }

  protected closeConnections(deadline: number): Promise<void> {
    return this.deployment.close(deadline);
  }
}
