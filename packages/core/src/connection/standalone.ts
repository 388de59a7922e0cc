import type { Redis } from 'ioredis';
import { boundedCall, quitBy } from './bounded-call.js';
import type { EmbeddedScript } from './scripts.js';
import { Transport } from './transport.js';
import { resolveConnection } from './endpoints.js';
import { waitForReplicas, type Deployment, type SubscriberConnection, type SubscriberHandlers, type SyncReplicas } from './deployment.js';
import { openSubscriberConnection } from './subscriber-connection.js';
import type { ProcessRefs } from './process-refs.js';

/** `host:port` (or the socket path) of a connection, or its Sentinel master's name; never credentials. */
export function serverName(redis: Redis): string {
  const { host, port, path, sentinels, name } = redis.options;
  if (Array.isArray(sentinels) && sentinels.length > 0 && typeof name === 'string') return `Sentinel master ${JSON.stringify(name)}`;
  if (typeof path === 'string' && path !== '') return path;
  const shown = host ?? 'localhost';
  return `${shown.includes(':') ? `[${shown}]` : shown}:${port ?? 6379}`;
}

/** One Redis server (or a Sentinel-managed master): plain pub/sub, and every hold may share a renewal batch. */
export class StandaloneDeployment implements Deployment {
  readonly redis: Redis;
  readonly transport: Transport;
  readonly owned: boolean;
  readonly sharded = false;
  readonly syncsReplicas: boolean;
  private refs: ProcessRefs | undefined;

  /** @throws InvalidArgumentError for a bad `redis` input (see resolveConnection). */
  constructor(
    input: unknown,
    commandTimeoutMs: number,
    scripts: readonly EmbeddedScript[],
    private readonly syncReplicas?: SyncReplicas,
    batching = true,
    connectionName?: string,
  ) {
    ({ redis: this.redis, owned: this.owned } = resolveConnection(input, 'redis', connectionName));
    this.transport = new Transport(this.redis, commandTimeoutMs, scripts, batching);
    this.syncsReplicas = syncReplicas !== undefined;
    // Connection errors surface as typed errors of the calls; this keeps ioredis from printing them as unhandled.
    if (this.owned) this.redis.on('error', () => undefined);
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

  onReconnect(listener: () => void): void {
    let wasReady = this.redis.status === 'ready';
    this.redis.on('ready', () => {
      if (wasReady) listener();
      wasReady = true;
    });
  }

  onServerReady(listener: (node: Redis, server: string) => void): void {
    const ready = (): void => listener(this.redis, serverName(this.redis));
    this.redis.on('ready', ready);
    if (this.redis.status === 'ready') ready();
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

  async close(deadline: number): Promise<void> {
    if (this.owned) await quitBy(this.redis, deadline, '(connection)');
  }
}
