import type { Redis } from 'ioredis';
import type { Transport } from '../engine/transport.js';

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
  /** Resolves once the server acknowledged the subscription. */
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  close(): void;
}

/**
 * The seam between the engine and how Redis is deployed: where commands go,
 * how releases are announced and heard, how renewals may be batched, and what
 * runs after a write. Standalone (and Sentinel, through ioredis's options) is
 * {@link StandaloneDeployment}; a Cluster plugs in here with sharded pub/sub.
 */
export interface Deployment {
  /** The command connection. */
  readonly redis: Redis;
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
  /**
   * Runs after each write that must be durable before it counts (an acquire,
   * a renewal): nothing on a plain deployment; `WAIT` with replica
   * acknowledgement when asked for. Rejects when the write cannot be counted on.
   */
  afterWrite(): Promise<void>;
  /** Calls `listener` each time the command connection is ready again after it was lost. */
  onReconnect(listener: () => void): void;
  /** Closes what rlock created (QUIT, bounded by `deadline` in monotonic ms), leaves the rest open. */
  close(deadline: number): Promise<void>;
}
