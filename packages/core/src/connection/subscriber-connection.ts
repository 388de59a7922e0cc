import type { Redis } from 'ioredis';
import type { SubscriberConnection, SubscriberHandlers } from './deployment.js';
import { DownTracker } from './down-tracker.js';
import type { ProcessRefs } from './process-refs.js';

/**
 * A connection for (un)subscribing only, duplicated from `source` (same
 * options, without auto pipelining) and always owned by the caller. ioredis 6
 * holds commands back until its connection handshake is done, so a SUBSCRIBE
 * sent while it connects cannot race the ready check (ioredis #2037); the
 * ready check is off anyway, since a subscriber has nothing to check. A
 * refused or reset connection fails a SUBSCRIBE at once, as it fails commands.
 */
export function openSubscriberConnection(source: Redis, handlers: SubscriberHandlers, refs?: ProcessRefs): SubscriberConnection {
  const connection = source.duplicate({ enableAutoPipelining: false, enableReadyCheck: false });
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
