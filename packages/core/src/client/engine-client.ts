import { EventEmitter } from 'eventemitter3';
import { ClientClosedError, RedisCommandError } from '../errors.js';
import { checkFunction } from '../checks/argument-checks.js';
import type { ResolvedCommonOptions } from './client-options.js';
import type { TaskContext } from '../tasks/task-context.js';
import { onTaskEnd, runInNewTaskReportingEnd, type TaskSource } from '../tasks/task-end.js';
import { withinMs } from '../connection/bounded-call.js';
import type { RLockClientEvents } from './client-events.js';
import { EngineContext } from '../engine/engine-context.js';
import type { Hold } from '../engine/hold.js';
import { monotonicNow } from '../connection/time.js';
import { WaitQueues, type QueueSubscription, type WaitQueue } from '../engine/wait-queue.js';
import { closeOnSignals, type CloseOnSignalsOptions } from './close-on-signals.js';
import { ProcessRefs } from '../connection/process-refs.js';
import { newClientId } from './client-id.js';
import { hostname } from 'node:os';
import { inspect, type InspectOptions } from 'node:util';
import { redactedView } from '../checks/redact.js';
import type { ClientIdentity } from '../connection/client-names.js';
import { Telemetry } from '../observability/telemetry.js';
import type { Deployment } from '../connection/deployment.js';
import { readEvictionSettings, type EvictionSettings } from '../connection/eviction-policy.js';

/** What `close()` did with the holds the client still had. */
export interface CloseReport {
  /** Names of the objects whose holds were released. */
  readonly released: string[];
  /** Names of those whose release failed or timed out (they expire with their lease). */
  readonly failed: string[];
}

/** Events emitted where a throwing listener must not escape. */
type SafeEventName = 'lockAcquired' | 'lockReleased' | 'lockLost' | 'lockRenewed' | 'holdLeaked' | 'warning';

/** Code of the process warning for a hold that outlived its task. */
export const HOLD_LEAKED_WARNING = 'RLOCK_HOLD_LEAKED';

/** Code of the process warning (and `warning` event) for a server whose `maxmemory-policy` can evict lock keys. */
export const EVICTION_POLICY_WARNING = 'RLOCK_EVICTION_POLICY';
/** Code of the process warning for an announcement Redis refused (an ACL without channel rights). */
export const PUBLISH_REFUSED_WARNING = 'RLOCK_PUBLISH_REFUSED';

/**
 * What every client shares, on one deployment or across Redlock masters: one {@link EngineContext}, typed events a throwing listener
 * cannot break, tasks, the renewer and one idempotent close(); a subclass subscribes queues and closes its connections.
 */
export abstract class EngineClient extends EventEmitter<RLockClientEvents> {
  /** Unguessable id of this client: the first half of every owner id. */
  readonly clientId = newClientId();
  /** This client for people: its `name` option, host and pid (what `inspect()` shows for its holds). */
  readonly identity: ClientIdentity;
  /** @internal What the client's objects share. */
  protected readonly context: EngineContext;
  private closing: Promise<CloseReport> | undefined;
  /** Notices (see {@link EngineClient.messagesDropped}) that were not a force-unlock's. */
  protected noticesDropped = 0;
  /** Where each hold was first acquired, with `captureLeakStacks` only. */
  private readonly leakStacks: WeakMap<Hold, string> | undefined;
  /** Stops reporting the holds of ended tasks (see checkTaskEnd). */
  private readonly stopHearingTaskEnds = onTaskEnd((task, source) => this.checkTaskEnd(task, source));
  /** The eviction warning was given (once per client). */
  private evictionWarned = false;
  /** Holds, waits and calls in progress: without any, `unrefWhenIdle` connections let the process exit. */
  protected readonly work = new ProcessRefs();
  /** A refused announcement was reported (once per client: every later one is refused alike). */
  private publishRefusalReported = false;

  protected constructor(options: ResolvedCommonOptions) {
    super();
    this.identity = Object.freeze({ name: options.name, host: hostname(), pid: process.pid });
    if (options.captureLeakStacks) this.leakStacks = new WeakMap();
    const queues = new WaitQueues((queue) => this.countWaiting(this.subscribeQueue(queue)));
    const telemetry = new Telemetry(options.metricName);
    this.context = new EngineContext({ clientId: this.clientId, ...options, telemetry }, queues, {
      watchesLosses: () => this.listenerCount('lockLost') > 0,
      began: () => this.work.enter(),
      ended: (hold) => {
        this.work.leave();
        telemetry.holdEnded(hold, hold.state);
      },
      callStarted: () => this.work.enter(),
      callEnded: () => this.work.leave(),
      // Payloads are built only for listeners: these run twice per lock/unlock pair.
      acquired: (hold) => {
        if (this.leakStacks !== undefined && !this.leakStacks.has(hold)) this.leakStacks.set(hold, acquisitionStack());
        if (this.listenerCount('lockAcquired') > 0) {
          this.emitSafely('lockAcquired', { name: hold.name, owner: hold.owner, token: hold.token, count: hold.count });
        }
      },
      released: (hold, via) => {
        if (this.listenerCount('lockReleased') > 0) {
          this.emitSafely('lockReleased', { name: hold.name, owner: hold.owner, token: hold.token, via });
        }
      },
      lost: (hold, error) => {
        telemetry.leaseLost(hold, hold.name, hold.owner, hold.token, error.reason, error);
        this.emitSafely('lockLost', { name: hold.name, owner: hold.owner, token: hold.token, reason: error.reason, error });
      },
      backgroundError: (error) => this.reportError(error),
    });
  }

  /** A channel waited on is work in progress until its subscription closes (its last waiter left). */
  private countWaiting(subscription: QueueSubscription): QueueSubscription {
    this.work.enter();
    let counted = true;
    return {
      ready: subscription.ready,
      close: () => {
        if (counted) this.work.leave();
        counted = false;
        subscription.close();
      },
    };
  }

  /** Starts the renewer once the subclass registered its kinds of hold. */
  protected startRenewer(options: ResolvedCommonOptions): void {
    this.context.renewer = options.renewer?.(this.context.kinds, {
      renewed: (count) => this.emitSafely('lockRenewed', { count }),
      error: (error) => this.reportError(error),
    });
  }

  /** The options the client was created with, checked, with every default filled in. */
  abstract readonly options: ResolvedCommonOptions;

  /** What `util.inspect` and `console.log` show: who the client is and its options, with passwords and TLS keys as `***`. */
  [inspect.custom](_depth: number, options: InspectOptions): string {
    const view = { name: this.identity.name, clientId: this.clientId, closing: this.isClosing, options: redactedView(this.options) };
    return `${this.constructor.name} ${inspect(view, options)}`;
  }

  /**
   * Reads each server's `maxmemory-policy` as it becomes ready (never delaying a call) and warns once, with a process warning and the
   * `warning` event, if one can evict lock keys; a server that refuses both CONFIG and INFO is left alone, one that does not answer is
   * asked again when ready again.
   */
  protected watchEviction(deployment: Pick<Deployment, 'onServerReady'>, timeoutMs: number): void {
    const answered = new Set<string>();
    deployment.onServerReady((node, server) => {
      if (this.evictionWarned || this.closing || answered.has(server)) return;
      void readEvictionSettings(node, timeoutMs).then((read) => {
        if (read === 'unanswered') return;
        answered.add(server);
        // Every policy but noeviction may evict rlock's keys (volatile-* ones too: every lock key has a TTL).
        if (read === 'refused' || read.policy === 'noeviction' || this.evictionWarned || this.closing) return;
        this.evictionWarned = true;
        const message = evictionMessage(server, read);
        process.emitWarning(message, { code: EVICTION_POLICY_WARNING });
        this.emitSafely('warning', { code: EVICTION_POLICY_WARNING, message, server, policy: read.policy, maxmemoryBytes: read.maxmemoryBytes });
      });
    });
  }

  /** True from the moment close() was called. */
  get isClosing(): boolean {
    return this.closing !== undefined;
  }

  /** Runs `fn` in a new task (a Java thread's counterpart; inside a task, a child task that shares none of its locks); a hold it leaves behind is reported (`holdLeaked`). */
  task<T>(fn: () => T | Promise<T>): Promise<T> {
    checkFunction(fn, 'task(fn)');
    return runInNewTaskReportingEnd(async () => fn());
  }

  /** A task ended: reports each hold of its owner on this client that it still holds. */
  private checkTaskEnd({ taskId }: TaskContext, source: TaskSource): void {
    if (this.closing) return;
    for (const hold of this.context.holds.takeOwner(`${this.clientId}:${taskId}`)) {
      // Acquisitions a handle or a withLock scope carries are theirs to release.
      const count = hold.count - hold.scoped;
      if (!hold.active || hold.releaseSent || count <= 0) continue;
      const stack = this.leakStacks?.get(hold);
      const started = source === 'task' ? 'client.task()' : 'a request under taskMiddleware()';
      const message =
        `rlock: a task (${taskId}, started by ${started}) ended still holding "${hold.name}" ` +
        `(${count} acquisition${count === 1 ? '' : 's'}, owner ${hold.owner}): nothing can release it through the task now, ` +
        `so it is renewed until forceUnlock(), close() or exit, and every later caller waits. ` +
        `Release it in a finally block, or use withLock().` +
        (stack === undefined ? ' Create the client with captureLeakStacks: true to see where it was taken.' : '');
      process.emitWarning(message, { code: HOLD_LEAKED_WARNING, detail: stack === undefined ? undefined : `acquired ${stack}` });
      if (this.listenerCount('holdLeaked') > 0) {
        this.emitSafely('holdLeaked', { name: hold.name, owner: hold.owner, token: hold.token, count, taskId, source, stack });
      }
    }
  }

  /**
   * A script's PUBLISH/SPUBLISH was refused (an ACL without channel rights) after it changed what it came to change: the call succeeds, and
   * waiters in other clients find out by their timed retry instead of at once. Said once per client: a `RLOCK_PUBLISH_REFUSED` warning and `error`.
   */
  protected reportPublishRefused(refusal: string, what: string, key: string): void {
    if (this.publishRefusalReported) return;
    this.publishRefusalReported = true;
    // Redis's own text, but from the network: printable characters only, and short.
    const reason = refusal.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
    const message =
      `rlock: Redis refused the announcement of ${what} on "${key}" (${reason}); the change itself was made. ` +
      `Waiters in other clients are not woken by it and try again on their own timer instead (up to a third of watchdogTimeoutMs later). ` +
      `Give this Redis user the channels of its key prefix (ACL SETUSER <user> &<keyPrefix>:*). Said once per client.`;
    process.emitWarning(message, { code: PUBLISH_REFUSED_WARNING });
    this.reportError(new RedisCommandError(message, key));
  }

  /**
   * Rejects waiters, stops renewal, loses the holds (`closed`), releases them best-effort and closes the connections it created; idempotent.
   * Calls in flight get `commandTimeoutMs`, releases another, so a frozen server cannot stall it.
   */
  close(): Promise<CloseReport> {
    return (this.closing ??= this.shutdown());
  }

  /**
   * Calls `close()` on the first SIGTERM or SIGINT (or `signals`) within `timeoutMs`, then re-raises it if nobody else listens; returns the remover.
   * @throws InvalidArgumentError for a bad option.
   * @example
   * client.closeOnSignals({ timeoutMs: 5_000 });
   * process.on('SIGTERM', () => server.close()); // drains; rlock releases its locks meanwhile
   */
  closeOnSignals(options?: CloseOnSignalsOptions): () => void {
    return closeOnSignals(() => this.close(), options);
  }

  private async shutdown(): Promise<CloseReport> {
    const ctx = this.context;
    ctx.closed = true;
    this.stopHearingTaskEnds();
    // close()'s caller awaits the releases and QUIT: keep the process alive until then.
    this.work.enter();
    ctx.queues.close(new ClientClosedError());
    this.closeSubscribers();
    const renewalStopped = ctx.renewer?.close();
    ctx.background.stop();
    const { commandTimeoutMs } = ctx;
    // An acquire in flight whose grant comes now undoes it in its own turn.
    await untilDeadline(ctx.chains.idle(), monotonicNow() + commandTimeoutMs);
    const deadline = monotonicNow() + commandTimeoutMs;
    const report: CloseReport = { released: [], failed: [] };
    await Promise.all(
      ctx.holds
        .all()
        .filter((hold) => hold.active)
        .map(async (hold) => {
          hold.lose('closed');
          hold.beginFinalRelease();
          // A failed or late release is reported failed (untilDeadline answers undefined).
          const released = await untilDeadline(ctx.kinds.get(hold.kind).clear(hold), deadline);
          (released === true ? report.released : report.failed).push(hold.name);
        }),
    );
    // QUIT only after cancels and releases: it would overtake an auto-pipeline batch.
    await untilDeadline(ctx.background.settled(), deadline);
    await this.closeConnections(deadline);
    await untilDeadline(Promise.resolve(renewalStopped), deadline);
    return report;
  }

  /**
   * How many messages on this client's channels were not what rlock's scripts publish there (malformed, unknown, forged) and
   * were dropped rather than acted on: it should stay 0; a number that grows says something else publishes on them.
   */
  get messagesDropped(): number {
    return this.context.queues.drops.count + this.noticesDropped;
  }

  /** How `queue`'s channel is subscribed (one subscriber connection, or one per master). */
  protected abstract subscribeQueue(queue: WaitQueue): QueueSubscription;

  /** Closes the subscriber connections (waiters were rejected already). */
  protected abstract closeSubscribers(): void;

  /** Closes the connections the client created, bounded by `deadline` (monotonic ms). */
  protected abstract closeConnections(deadline: number): Promise<void>;

  /** @throws ClientClosedError once close() was called. */
  protected assertOpen(): void {
    if (this.closing) throw new ClientClosedError();
  }

  /** Emits where a throwing listener must not escape (timers, mid-bookkeeping): its error becomes an `error` event. */
  protected emitSafely<E extends SafeEventName>(event: E, payload: Parameters<RLockClientEvents[E]>[0]): void {
    try {
      (this.emit as (event: E, payload: unknown) => boolean)(event, payload);
    } catch (listenerError) {
      this.reportError(listenerError);
    }
  }

  /** Emits `error` for a background failure; never throws. */
  protected reportError(error: unknown): void {
    try {
      this.emit('error', error instanceof Error ? error : new Error(String(error)));
    } catch {
      // An error listener that throws has nowhere left to report to.
    }
  }
}

/** The caller's stack, user frames included (async frames count toward the limit). */
function acquisitionStack(): string {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 50;
  const stack = new Error('here').stack ?? '';
  Error.stackTraceLimit = limit;
  return stack.replace(/^Error: here\n/, '');
}

/** Resolves with `work`'s value, or with undefined once the monotonic `deadline` passed. Never rejects. */
function untilDeadline<T>(work: Promise<T>, deadline: number): Promise<T | undefined> {
  const remainingMs = deadline - monotonicNow();
  if (remainingMs <= 0) return Promise.resolve(undefined);
  return withinMs(work, Math.ceil(remainingMs), () => undefined).catch(() => undefined);
}

/** What the eviction warning says: the server, its policy, why it is unsafe, and the fix. */
function evictionMessage(server: string, { policy, maxmemoryBytes }: EvictionSettings): string {
  const which = policy.startsWith('volatile-')
    ? 'volatile-* policies evict keys with a TTL, and every lock key and lease has one'
    : 'it evicts any key: locks, fencing counters, semaphores and latches';
  const limit = maxmemoryBytes === 0 ? ' (maxmemory is 0 now, so nothing is evicted until a limit is set)' : '';
  return (
    `rlock: Redis at ${server} runs maxmemory-policy ${policy}${limit}: under memory pressure ${which}, ` +
    `so a second client could take a lock that is still held. Only noeviction is safe: CONFIG SET maxmemory-policy noeviction ` +
    `(and in redis.conf); see docs/security.md#eviction.`
  );
}
