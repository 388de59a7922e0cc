import type { Redis } from 'ioredis';
import { boundedCall } from './bounded-call.js';
import type { EmbeddedScript } from './scripts.js';
import { Transport } from './transport.js';
import { resolveConnection } from './endpoints.js';
import { ConnectionDeployment, waitForReplicas, type Deployment, type SubscriberConnection, type SubscriberHandlers, type SyncReplicas } from './deployment.js';
import { openSubscriberConnection } from './subscriber-connection.js';
import type { ProcessRefs } from './process-refs.js';

/** One Redis server (or a Sentinel-managed master): plain pub/sub, and every hold may share a renewal batch. */
export class StandaloneDeployment extends ConnectionDeployment<Redis> implements Deployment {
  readonly sharded = false;
  private refs: ProcessRefs | undefined;

  /** @throws InvalidArgumentError for a bad `redis` input (see resolveConnection). */
  constructor(
    input: unknown,
    commandTimeoutMs: number,
    scripts: readonly EmbeddedScript[],
    syncReplicas?: SyncReplicas,
    batching = true,
    connectionName?: string,
  ) {
    const { redis, owned } = resolveConnection(input, 'redis', connectionName);
    super(redis, owned, new Transport(redis, commandTimeoutMs, scripts, batching), syncReplicas);
  }

  /** Settles once the first connection attempt has, so a short-timeout call does not fail a server still connecting. */
  firstConnect(timeoutMs: number): Promise<void> {
    const { redis } = this;
    if (redis.status === 'ready' || redis.status === 'wait' || redis.status === 'end') return Promise.resolve();
    return new Promise<void>((resolve) => {
      const events = ['ready', 'error', 'end', 'close'] as const;
      const done = (): void => {
        clearTimeout(timer);
        for (const event of events) redis.off(event, done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs).unref();
      for (const event of events) redis.once(event, done);
    });
  }

  protected servers(): Redis[] {
    return [this.redis];
  }

  openSubscriber(handlers: SubscriberHandlers): SubscriberConnection {
    return openSubscriberConnection(this.redis, handlers, this.refs);
  }

  unrefWhenIdle(refs: ProcessRefs): void {
    this.refs = refs;
    this.transport.calls = refs;
    if (this.owned) refs.track(this.redis);
  }

  batchKey(): string {
    return 'server';
  }

  serverOf(): string {
    return 'server';
  }

  clientList(key: string): Promise<string> {
    return boundedCall(() => this.redis.call('CLIENT', 'LIST', 'TYPE', 'normal') as Promise<string>, this.transport.timeoutMs, 'CLIENT LIST', key);
  }

  afterWrite(key: string): Promise<void> {
    return waitForReplicas(this.syncReplicas, key, (args) => this.transport.call('wait', args, 'WAIT', key, Number));
  }
}
