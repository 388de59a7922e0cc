import type { SubscriberConnection, SubscriberHandlers } from '../connection/deployment.js';
import { toRLockError, withinMs } from '../connection/bounded-call.js';
import { RLockError, RedisUnavailableError } from '../errors.js';

/** One channel's subscription on a hub. */
export interface HubSubscription {
  /** Resolves once the server acknowledged it; rejects (typed) when it failed or timed out. */
  readonly ready: Promise<void>;
  /** True once acknowledged (and not closed). */
  readonly acked: boolean;
  close(): void;
}

/** One client's subscriber connection per server, opened on first use; each channel's listener decides what a message wakes. */
export class ChannelHub {
  private connection: SubscriberConnection | undefined;
  private readonly listeners = new Map<string, { listener: (payload: string) => void; acked: boolean }>();
  private closed = false;

  constructor(
    private readonly open: (handlers: SubscriberHandlers) => SubscriberConnection,
    private readonly timeoutMs: number,
    private readonly events: {
      /** The connection came back: whatever was published meanwhile is gone. */
      resubscribed(): void;
      error(error: Error): void;
    },
  ) {}

  /** Subscribes `listener` to `channel` (one listener per channel); `broadcast`: see SubscriberConnection.subscribe. */
  subscribe(channel: string, listener: (payload: string) => void, broadcast = false): HubSubscription {
    const connection = this.ensureConnection();
    const entry = { listener, acked: false };
    this.listeners.set(channel, entry);
    // Sent now; a connection that throws fails the subscription as one that rejects does.
    const subscribing = (async () => connection.subscribe(channel, broadcast))().catch((error: unknown) => {
      throw toRLockError(error, 'SUBSCRIBE', channel);
    });
    // Read below once this turn is over; a failure before then is not unhandled.
    subscribing.catch(() => undefined);
    // Bounded from the end of this turn: a caller that makes thousands of waiting calls in one loop holds the event loop
    // before the connection can even open, and Redis is not late for that.
    const ready = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() =>
        withinMs(subscribing, this.timeoutMs, () => new RedisUnavailableError(`Redis did not answer SUBSCRIBE on "${channel}" within ${this.timeoutMs} ms`)),
      )
      .then(() => {
        entry.acked = this.listeners.get(channel) === entry;
      });
    let closed = false;
    return {
      ready,
      get acked() {
        return entry.acked;
      },
      close: () => {
        if (closed) return;
        closed = true;
        if (this.listeners.get(channel) !== entry) return;
        entry.acked = false;
        if (this.closed) return;
        // Heard until the server confirms: a message published before the UNSUBSCRIBE may be passed on.
        const forget = (): void => {
          if (this.listeners.get(channel) === entry) this.listeners.delete(channel);
        };
        connection.unsubscribe(channel, broadcast).then(forget, (error: unknown) => {
          forget();
          if (!this.closed) this.events.error(unavailable(error));
        });
      },
    };
  }

  close(): void {
    this.closed = true;
    this.listeners.clear();
    this.connection?.close();
    this.connection = undefined;
  }

  private ensureConnection(): SubscriberConnection {
    this.connection ??= this.open({
      message: (channel, payload) => this.listeners.get(channel)?.listener(payload),
      resubscribed: () => this.events.resubscribed(),
      // Connection errors reach waiters as timeouts of their next try.
      error: (error) => this.events.error(unavailable(error)),
    });
    return this.connection;
  }
}

/** Every error rlock reports is its own: the socket's error becomes the cause. */
function unavailable(error: unknown): Error {
  if (error instanceof RLockError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new RedisUnavailableError(`subscriber connection: ${message}`, { cause: error });
}
