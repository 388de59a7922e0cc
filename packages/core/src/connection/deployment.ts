import type { Cluster, Redis } from 'ioredis';
import type { Transport } from './transport.js';
import { RedisUnavailableError } from '../errors.js';
import type { ProcessRefs } from './process-refs.js';

/** What a subscriber connection reports. */
export interface SubscriberHandlers {
  /** A message arrived on a subscribed channel. */
  message(channel: string, payload: string): void;
  /**
   * The connection is back after a reconnect and ioredis resubscribed, but
   * whatever was published meanwhile is gone: waiters must try again.
   */
  resubscribed(): void;
  /** A connection error: only reported, never thrown (waiters see it as timeouts). */
  error(error: Error): void;
}

/** A connection that (un)subscribes to channels: one per client (per node on a Cluster). */
export interface SubscriberConnection {
  /**
   * Resolves once the server acknowledged the subscription. `broadcast`: a
   * channel published with plain PUBLISH from any slot (a client's notices),
   * so on a Cluster it is SUBSCRIBE rather than the slot's SSUBSCRIBE.
   */
  subscribe(channel: string, broadcast?: boolean): Promise<unknown>;
  unsubscribe(channel: string, broadcast?: boolean): Promise<unknown>;
  close(): void;
}

/**
 * The seam between the engine and how Redis is deployed: where commands go,
 * how releases are announced and heard, how renewals may be batched, and what
 * runs after a write. Standalone (and Sentinel, through ioredis's options) is
 * {@link StandaloneDeployment}; a Cluster plugs in here with sharded pub/sub.
 */
export interface Deployment {
  /** The command connection: one Redis, or a Cluster. */
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
  /**
   * Runs after each write that must be durable before it counts (an acquire,
   * a renewal): nothing on a plain deployment; `WAIT` with replica
   * acknowledgement when asked for. Rejects when the write cannot be counted on.
   */
  afterWrite(key: string): Promise<void>;
  /**
   * CLIENT LIST (connections of type normal) on the server that holds `key`,
   * bounded by the command timeout: who is connected, by connection name.
   */
  clientList(key: string): Promise<string>;
  /** Which server holds `key`: equal for keys on one server (one Redis: a constant; a Cluster: the slot's master). */
  serverOf(key: string): string;
  /** Calls `listener` each time the command connection is ready again after it was lost. */
  onReconnect(listener: () => void): void;
  /** Closes what rlock created (QUIT, bounded by `deadline` in monotonic ms), leaves the rest open. */
  close(deadline: number): Promise<void>;
  /**
   * From now on the connections rlock creates (the command connection when
   * owned, every subscriber connection) keep the process alive only while
   * `refs` counts work; the command calls are counted into it. A connection
   * the caller gave is left as it is.
   */
  unrefWhenIdle(refs: ProcessRefs): void;
}

/**
 * `reply`, resolved once replicas have the write when the deployment syncs
 * replicas and `wrote(value)` says it changed something. A rejection (too few
 * acknowledgements) makes the caller undo a grant, or report the write.
 */
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
 * WAIT for `sync.replicas` acknowledgements of the writes sent before it on
 * the connection that holds `key`; nothing when not asked for.
 * @throws RedisUnavailableError when fewer replicas acknowledged in time: the
 *   write must not count (a failover now could lose it)
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
