import type { Redis } from 'ioredis';

/** What a subscriber connection reports. */
export interface SubscriberHandlers {
  message(channel: string): void;
  /**
   * The connection is back after a reconnect. ioredis resubscribes by itself,
   * but whatever was published meanwhile is gone: waiters must try again.
   */
  resubscribed(): void;
  /** A connection error: only reported, never thrown (waiters see it as timeouts). */
  error(error: Error): void;
}

/**
 * A connection for (un)subscribing only, duplicated from `source` (same options,
 * without auto pipelining) and always owned by the caller, who disconnects it.
 */
export function openSubscriberConnection(source: Redis, handlers: SubscriberHandlers): Redis {
  const connection = source.duplicate({ enableAutoPipelining: false });
  let readyOnce = false;
  connection.on('message', (channel: string) => handlers.message(channel));
  connection.on('ready', () => {
    if (readyOnce) handlers.resubscribed();
    readyOnce = true;
  });
  connection.on('error', (error: Error) => handlers.error(error));
  return connection;
}
