/**
 * How a waiter learns it may try again, as its object picks it. {@link ChannelWait} (the default): on the object's channel, woken by a
 * release message, with a timed try at the holder's TTL (capped at a third of the watchdog lease) for a message lost.
 * {@link BackoffWait}: it never subscribes and tries again after jittered, exponentially growing delays.
 */
export type WaitStrategy = ChannelWait | BackoffWait;

/** Waiting on the object's channel: what a wait spec without a strategy does. */
export interface ChannelWait {
  readonly by: 'channel';
}

/**
 * Waiting by back-off: the n-th wait after a refusal is drawn uniformly from [b / 2, b], b = min(maxDelayMs, initialDelayMs ·
 * multiplier^n), never below initialDelayMs, and no later than the holder's TTL runs out. The jitter keeps waiters that
 * were refused together from trying together again.
 */
export interface BackoffWait {
  readonly by: 'backoff';
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly multiplier: number;
}
