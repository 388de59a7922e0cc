import type { Redis } from 'ioredis';
import type { SubscriberConnection, SubscriberHandlers } from './deployment.js';
import { DownTracker } from './down-tracker.js';
import type { ProcessRefs } from './process-refs.js';

/** A subscribe-only duplicate of `source`, owned by the caller; no ready check (a SUBSCRIBE could race it), and a down one fails SUBSCRIBE at once. */
export function openSubscriberConnection(source: Redis, handlers: SubscriberHandlers, refs?: ProcessRefs): SubscriberConnection {
  const connection = source.duplicate({ enableAutoPipelining: false, enableReadyCheck: false });
  handleOwnResubscribe(connection);
  // Its client's waiters keep it referenced; idle, it does not hold the process open.
  refs?.track(connection);
  let readyOnce = false;
  connection.on('message', (channel: string, payload: string) => handlers.message(channel, payload));
  connection.on('ready', () => {
    if (readyOnce) handlers.resubscribed();
    readyOnce = true;
  });
  connection.on('error', (error: Error) => handlers.error(error));
  const guard = new DownTracker(connection);
  return {
    subscribe: (channel) => guard.run(() => connection.subscribe(channel), 'SUBSCRIBE', channel),
    unsubscribe: (channel) => connection.unsubscribe(channel),
    close: () => {
      connection.removeAllListeners('message');
      connection.disconnect();
    },
  };
}

/**
 * ioredis resubscribes on each reconnect by calling the connection's own subscribe methods and drops their promises: one whose
 * connection closes again before Redis answers (a server that restarts) rejects with nobody listening, an unhandled rejection that can end
 * the process. Every promise these methods return gets a handler here; rlock's own calls still see each outcome (DownTracker).
 */
function handleOwnResubscribe(connection: Redis): void {
  for (const name of ['subscribe', 'psubscribe', 'ssubscribe'] as const) {
    const method = connection[name].bind(connection) as (...args: unknown[]) => Promise<unknown>;
    Object.defineProperty(connection, name, {
      configurable: true,
      writable: true,
      value: (...args: unknown[]): Promise<unknown> => {
        const outcome = method(...args);
        outcome.catch(() => undefined);
        return outcome;
      },
    });
  }
}
