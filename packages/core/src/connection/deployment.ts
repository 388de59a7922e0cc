import type { Cluster, Redis } from 'ioredis';
import type { Transport } from './transport.js';
import { RedisUnavailableError } from '../errors.js';
import type { ProcessRefs } from './process-refs.js';
import { quitBy } from './bounded-call.js';

/** What a subscriber connection reports. */
export interface SubscriberHandlers {
  message(channel: string, payload: string): void;
  /** Resubscribed after a reconnect; messages published meanwhile are gone, so waiters try again. */
  resubscribed(): void;
  /** A connection error: only reported, never thrown (waiters see it as timeouts). */
  error(error: Error): void;
}

/** A connection that (un)subscribes to channels: one per client (per node on a Cluster). */
export interface SubscriberConnection {
  /** Resolves once acknowledged. `broadcast`: plain SUBSCRIBE even on a Cluster (a client's notices). */
  subscribe(channel: string, broadcast?: boolean): Promise<unknown>;
  unsubscribe(channel: string, broadcast?: boolean): Promise<unknown>;
  close(): void;
}

/** How Redis is deployed (standalone/Sentinel or Cluster): where commands go, how announcements travel, how renewals batch, what follows a write. */
export interface Deployment {
  readonly redis: Redis | Cluster;
  /** rlock's batched, time-bounded way to the command connection. */
  readonly transport: Transport;
  /** True when rlock created the connection, and so closes it. */
  readonly owned: boolean;
  /** Announcements use SPUBLISH/SSUBSCRIBE (Cluster) instead of PUBLISH/SUBSCRIBE: the scripts' `sharded` flag. */
  readonly sharded: boolean;
  /** Opens a subscriber connection (the caller closes it). */
  openSubscriber(handlers: SubscriberHandlers): SubscriberConnection;
  /** Holds whose keys share a batch key may be renewed by one script call (one server, one slot). */
  batchKey(key: string): string;
  /** True when writes must reach replicas before they count (`syncReplicas`): then call {@link afterWrite}. */
  readonly syncsReplicas: boolean;
  /** After a write that must be durable to count: `WAIT` with `syncReplicas`, else nothing. Rejects when it cannot count. */
  afterWrite(key: string): Promise<void>;
  /** CLIENT LIST TYPE normal on the server that holds `key`, bounded by the command timeout. */
  clientList(key: string): Promise<string>;
  /** Which server holds `key`: equal for keys on one server (one Redis: a constant; a Cluster: the slot's master). */
  serverOf(key: string): string;
  /** Calls `listener` each time the command connection is ready again after it was lost. */
  onReconnect(listener: () => void): void;
  /** Calls `listener` with each server that holds keys (a Cluster's masters) and a printable address, when ready and after each reconnect. */
  onServerReady(listener: (node: Redis, server: string) => void): void;
  /** Closes what rlock created (QUIT, bounded by `deadline` in monotonic ms), leaves the rest open. */
  close(deadline: number): Promise<void>;
  /** rlock's own connections keep the process alive only while `refs` counts work (command calls count). */
  unrefWhenIdle(refs: ProcessRefs): void;
}

/** `reply`, once replicas have the write (with syncReplicas, when `wrote(value)`); a rejection makes the caller undo a grant or report the write. */
export function replicated<T>(deployment: Deployment, key: string, reply: Promise<T>, wrote: (value: T) => boolean): Promise<T> {
  if (!deployment.syncsReplicas) return reply;
  return reply.then(async (value) => {
    if (wrote(value)) await deployment.afterWrite(key);
    return value;
  });
}

/** Replica acknowledgement of every acquire and renewal (opt-in; see the client's `syncReplicas`). */
export interface SyncReplicas {
  /** Replicas that must have the write before it counts. */
  readonly replicas: number;
  /** How long WAIT waits for them, ms (below commandTimeoutMs). */
  readonly timeoutMs: number;
}

/**
 * WAIT for `sync.replicas` acknowledgements of the writes sent before it on the connection that holds `key`; nothing without `sync`.
 * @throws RedisUnavailableError when fewer acknowledged in time: the write must not count (a failover could lose it)
 */
export async function waitForReplicas(sync: SyncReplicas | undefined, key: string, wait: (args: (string | number)[]) => Promise<number>): Promise<void> {
  if (!sync) return;
  const acknowledged = await wait([sync.replicas, sync.timeoutMs]);
  if (acknowledged < sync.replicas) {
    throw new RedisUnavailableError(
      `only ${acknowledged} of ${sync.replicas} replicas acknowledged the write on "${key}" within ${sync.timeoutMs} ms (syncReplicas): it does not count`,
    );
  }
}

/** `host:port` (or the socket path) of a connection, or its Sentinel master's name; never credentials. */
export function serverName(redis: Redis): string {
  const { host, port, path, sentinels, name } = redis.options;
  if (Array.isArray(sentinels) && sentinels.length > 0 && typeof name === 'string') return `Sentinel master ${JSON.stringify(name)}`;
  if (typeof path === 'string' && path !== '') return path;
  const shown = host ?? 'localhost';
  return `${shown.includes(':') ? `[${shown}]` : shown}:${port ?? 6379}`;
}

/** What a deployment on one ioredis connection (one Redis, or a Cluster) does alike: replicas, reconnects, its servers and close. */
export abstract class ConnectionDeployment<R extends Redis | Cluster> {
  readonly syncsReplicas: boolean;

  constructor(
    readonly redis: R,
    readonly owned: boolean,
    readonly transport: Transport,
    protected readonly syncReplicas: SyncReplicas | undefined,
  ) {
    this.syncsReplicas = syncReplicas !== undefined;
    // Connection errors surface as typed errors of the calls; this keeps ioredis from printing them as unhandled.
    if (owned) redis.on('error', () => undefined);
  }

  /** The servers that hold keys, read when the connection is ready. */
  protected abstract servers(): Redis[];

  onReconnect(listener: () => void): void {
    let wasReady = this.redis.status === 'ready';
    this.redis.on('ready', () => {
      if (wasReady) listener();
      wasReady = true;
    });
  }

  onServerReady(listener: (node: Redis, server: string) => void): void {
    const ready = (): void => {
      for (const node of this.servers()) listener(node, serverName(node));
    };
    this.redis.on('ready', ready);
    if (this.redis.status === 'ready') ready();
  }

  async close(deadline: number): Promise<void> {
    if (this.owned) await quitBy(this.redis, deadline, this.redis.isCluster ? '(cluster)' : '(connection)');
  }
}
