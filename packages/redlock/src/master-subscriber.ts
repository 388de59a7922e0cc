import type { Redis } from 'ioredis';
import { openSubscriberConnection } from '@org/rlock-core';

/** Subscription state of one channel on one master. */
type AckState = 'pending' | 'acked' | 'failed';

export interface MasterSubscriberEvents {
  /** A release was announced on `channel` of master `index`. */
  message(index: number, channel: string): void;
  /** The connection came back and ioredis resubscribed: messages may have been missed. */
  resubscribed(index: number): void;
  error(error: Error): void;
}

/**
 * The subscriber connection of one master, shared by every waiter of the
 * client (a duplicate of the master's connection, always rlock's to close).
 * Subscribed channels are refcounted by the caller: {@link subscribe} once per
 * channel while anyone waits on it, {@link unsubscribe} when nobody does.
 */
export class MasterSubscriber {
  private connection: Redis | undefined;
  private readonly acks = new Map<string, AckState>();
  private closed = false;

  constructor(
    readonly index: number,
    private readonly source: Redis,
    private readonly timeoutMs: number,
    private readonly events: MasterSubscriberEvents,
  ) {}

  /** True once the master acknowledged the subscription to `channel`. */
  isAcked(channel: string): boolean {
    return this.acks.get(channel) === 'acked';
  }

  /**
   * Subscribes to `channel`; resolves true once the master acknowledged it, false
   * if it failed or did not answer within the timeout (it may still be
   * acknowledged later, e.g. when a dead master comes back). Never rejects.
   */
  subscribe(channel: string): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    const connection = this.ensureConnection();
    this.acks.set(channel, 'pending');
    // The master's command connection is down: do not make a waiter sit out the
    // timeout for it. The subscription stays queued and is acknowledged when
    // the master is back.
    const masterDown = this.source.status !== 'ready' && this.source.status !== 'wait';
    return new Promise<boolean>((resolve) => {
      if (masterDown) resolve(false);
      const timer = setTimeout(() => {
        if (this.acks.get(channel) === 'pending') this.acks.set(channel, 'failed');
        resolve(false);
      }, this.timeoutMs);
      timer.unref();
      connection.subscribe(channel).then(
        () => {
          clearTimeout(timer);
          if (this.acks.has(channel)) this.acks.set(channel, 'acked');
          resolve(true);
        },
        (error: unknown) => {
          clearTimeout(timer);
          if (this.acks.get(channel) === 'pending') this.acks.set(channel, 'failed');
          if (!this.closed) this.events.error(error instanceof Error ? error : new Error(String(error)));
          resolve(false);
        },
      );
    });
  }

  unsubscribe(channel: string): void {
    this.acks.delete(channel);
    const connection = this.connection;
    if (!connection || this.closed) return;
    connection.unsubscribe(channel).catch(() => undefined);
  }

  close(): void {
    this.closed = true;
    this.acks.clear();
    const connection = this.connection;
    this.connection = undefined;
    if (connection) {
      connection.removeAllListeners('message');
      connection.disconnect();
    }
  }

  private ensureConnection(): Redis {
    if (this.connection) return this.connection;
    const connection = openSubscriberConnection(this.source, {
      message: (channel) => this.events.message(this.index, channel),
      resubscribed: () => this.events.resubscribed(this.index),
      // A dead master is an expected state: waiters fall back to their timers.
      error: () => undefined,
    });
    this.connection = connection;
    return connection;
  }
}
