import type { Redis } from 'ioredis';
import { RedisUnavailableError } from '@org/rlock-core';
import { ChannelHub, StandaloneDeployment, monotonicNow, withinMs } from '@org/rlock-core/internal';
import { LEASE_LOCK_SCRIPTS, LeaseLockStore } from './lease-lock/lease-lock-store.js';

/** A master's run as `INFO server` tells it: `run_id`, and its start on this client's monotonic clock (the latest it can be). */
export interface MasterRun {
  readonly runId: string;
  readonly startedAt: number;
  /** This client saw the master's run_id change: it restarted while watched. */
  readonly restarted: boolean;
}

/**
 * One independent master: a standalone deployment with the lease lock's
 * scripts, its subscriber hub, and its run (`INFO server` on every connect,
 * so a restart is known before it votes again).
 */
export class Master {
  readonly deployment: StandaloneDeployment;
  readonly store: LeaseLockStore;
  readonly hub: ChannelHub;
  /** Settles once the first connection attempt has (and the run was read, if it connected), or timed out. */
  readonly firstConnect: Promise<void>;
  /** The last run read (kept while disconnected: other masters' quarantines compare with it). */
  run: MasterRun | undefined;
  /** Until when (monotonic ms) its votes do not count after a restart (see quarantineEnds). */
  quarantinedUntil = 0;
  /** The run was read on the current connection. */
  private known = false;
  private identifying: Promise<void> = Promise.resolve();

  constructor(
    readonly index: number,
    /** Printable name: the URL without credentials, or host:port. */
    readonly name: string,
    input: unknown,
    private readonly commandTimeoutMs: number,
    events: { resubscribed: () => void; identified: () => void },
    /** The name of the connection when rlock creates it (CLIENT SETNAME): who holds a lease, for CLIENT LIST. */
    connectionName?: string,
  ) {
    // Not batched: a round sends one command per lock, so a batch only delays each master's.
    this.deployment = new StandaloneDeployment(input, commandTimeoutMs, LEASE_LOCK_SCRIPTS, undefined, false, connectionName);
    this.store = new LeaseLockStore(this.deployment, commandTimeoutMs);
    // A dead master is an expected state: waiters fall back to their timers.
    this.hub = new ChannelHub((handlers) => this.deployment.openSubscriber(handlers), commandTimeoutMs, {
      resubscribed: () => events.resubscribed(),
      error: () => undefined,
    });
    // Each connect reads the run first (ioredis emits ready before it resends
    // anything), so a reply to an acquire is never read before the restart is known.
    this.redis.on('ready', () => {
      this.identifying = this.identify(events.identified);
    });
    if (this.redis.status === 'ready') this.identifying = this.identify(events.identified);
    else if (this.redis.status === 'wait') this.redis.connect().catch(() => undefined);
    this.firstConnect = this.deployment
      .firstConnect(commandTimeoutMs)
      .then(() => withinMs(this.identifying, commandTimeoutMs, () => undefined))
      .catch(() => undefined);
    // A master whose command connection comes back may make a majority
    // possible again: nothing announces that, so every waiter tries again.
    this.deployment.onReconnect(() => events.resubscribed());
  }

  get redis(): Redis {
    return this.deployment.redis;
  }

  get connected(): boolean {
    return this.redis.status === 'ready';
  }

  /** Connected, its run read on this connection, and out of quarantine: its votes count. */
  get voting(): boolean {
    return this.known && this.connected && monotonicNow() >= this.quarantinedUntil;
  }

  /** Why it does not vote now (for a vote that was not sent). */
  notVoting(what: string, key: string): RedisUnavailableError {
    const why =
      this.redis.status !== 'ready'
        ? `is not connected (${this.redis.status})`
        : this.known
          ? `restarted and sits out its quarantine for ${Math.ceil(this.quarantinedUntil - monotonicNow())} ms more`
          : 'has not told its run yet';
    return new RedisUnavailableError(`master ${this.name} ${why}: ${what} on "${key}" not sent`);
  }

  private async identify(identified: () => void): Promise<void> {
    this.known = false;
    try {
      const info = await this.deployment.transport.call('info', ['server'], 'INFO server', '(server)', String);
      const runId = /^run_id:(\w+)/m.exec(info)?.[1];
      const uptimeS = Number(/^uptime_in_seconds:(\d+)/m.exec(info)?.[1]);
      if (runId === undefined || !Number.isFinite(uptimeS)) throw new Error(`master ${this.name}: INFO server lacks run_id or uptime`);
      const restarted = this.run !== undefined && (this.run.restarted || this.run.runId !== runId);
      // Uptime is a difference of whole Unix seconds: up to 1 s more than has passed, so the latest start is now − (uptime − 1).
      this.run = runId === this.run?.runId ? this.run : { runId, startedAt: monotonicNow() - Math.max(0, uptimeS - 1) * 1_000, restarted };
      this.known = true;
      identified();
    } catch {
      // Not known, so not voting: try again while connected.
      if (this.redis.status === 'ready') setTimeout(() => void this.identify(identified), this.commandTimeoutMs).unref();
    }
  }
}
