import calculateSlot from 'cluster-key-slot';
import { Cluster, Command, type Redis } from 'ioredis';
import { boundedCall } from './bounded-call.js';
import { Transport } from './transport.js';
import type { EmbeddedScript } from './scripts.js';
import { ConnectionDeployment, waitForReplicas, type Deployment, type SubscriberConnection, type SubscriberHandlers, type SyncReplicas } from './deployment.js';

/** A Redis Cluster (≥ 7.0): every script touches one slot, announcements use sharded pub/sub, renewals batch by slot. */
export class ClusterDeployment extends ConnectionDeployment<Cluster> implements Deployment {
  readonly sharded = true;

  constructor(redis: Cluster, owned: boolean, commandTimeoutMs: number, scripts: readonly EmbeddedScript[], syncReplicas?: SyncReplicas) {
    // Scripts load per node as it connects (below): through the Cluster they would reach one random node.
    super(redis, owned, new Transport(redis, commandTimeoutMs, []), syncReplicas);
    const load = (node: Redis): void => {
      for (const script of scripts) {
        const command = new Command('script', ['LOAD', script.lua]);
        command.promise.catch(() => undefined);
        node.sendCommand(command);
      }
    };
    // A node's `ready` precedes what ioredis queued for it: the scripts are there before the first EVALSHA, after every reconnect too.
    const watch = (node: Redis): void => {
      node.on('ready', () => load(node));
      if (node.status === 'ready') load(node);
    };
    redis.on('+node', watch);
    for (const node of redis.nodes('all')) watch(node);
  }

  openSubscriber(handlers: SubscriberHandlers): SubscriberConnection {
    // Unlike a standalone subscriber (subscriber-connection.ts), nothing here needs its resubscribe promises handled: ioredis's
    // Cluster subscribers never reconnect a connection (retryStrategy null; a new one replaces it) and catch their own resubscribes.
    const subscriber = this.redis.duplicate(undefined, { shardedSubscribers: true, enableAutoPipelining: false });
    let ready = false;
    subscriber.on('smessage', (channel: string, payload: string) => handlers.message(channel, payload));
    subscriber.on('message', (channel: string, payload: string) => handlers.message(channel, payload));
    // A subscriber connection (re)made or moved: what was published meanwhile is gone, so every waiter tries again.
    const resubscribed = (): void => {
      if (ready) handlers.resubscribed();
    };
    subscriber.on('subscribersReady', () => {
      resubscribed();
      ready = true;
    });
    subscriber.on('+subscriber', resubscribed);
    subscriber.on('-node', resubscribed);
    subscriber.on('error', (error: Error) => handlers.error(error));
    return {
      // A broadcast channel is heard on any node: PUBLISH reaches every node's subscribers.
      subscribe: (channel, broadcast) => (broadcast ? subscriber.subscribe(channel) : subscriber.ssubscribe(channel)),
      unsubscribe: (channel, broadcast) => (broadcast ? subscriber.unsubscribe(channel) : subscriber.sunsubscribe(channel)),
      close: () => {
        subscriber.removeAllListeners('smessage');
        subscriber.removeAllListeners('message');
        subscriber.disconnect();
      },
    };
  }

  /** Holds of one slot may share a renewal (their keys must be on one node). */
  batchKey(key: string): string {
    return String(calculateSlot(key));
  }

  serverOf(key: string): string {
    const slot = calculateSlot(key);
    return this.redis.slots[slot]?.[0] ?? `slot ${slot}`;
  }

  /** On the master of `key`'s slot: the node its holder wrote to. */
  clientList(key: string): Promise<string> {
    return this.callAtSlotOf(key, 'client', ['LIST', 'TYPE', 'normal'], 'CLIENT LIST') as Promise<string>;
  }

  afterWrite(key: string): Promise<void> {
    return waitForReplicas(this.syncReplicas, key, (args) => this.callAtSlotOf(key, 'wait', args, 'WAIT').then(Number));
  }

  /** A command without a key, on the master of `key`'s slot (ioredis routes it to the slot it is given), bounded by the command timeout. */
  private callAtSlotOf(key: string, name: string, args: (string | number)[], what: string): Promise<unknown> {
    const command = new Command(name, args, { replyEncoding: 'utf8' });
    (this.redis.sendCommand as (command: Command, stream?: unknown, node?: { slot: number }) => unknown)(command, undefined, { slot: calculateSlot(key) });
    return boundedCall(() => command.promise, this.transport.timeoutMs, what, key);
  }

  override onReconnect(listener: () => void): void {
    super.onReconnect(listener);
    // A failover or a resharding: holds on the moved slots may be gone.
    this.redis.on('-node', listener);
  }

  /** Its masters: `ready` follows the slots' refresh, so they are known then, after a failover too. */
  protected servers(): Redis[] {
    return this.redis.nodes('master');
  }

  /** Not on a Cluster: its node connections and timers are ioredis's own and stay referenced. */
  unrefWhenIdle(): void {
    // Nothing to do; see above.
  }
}
