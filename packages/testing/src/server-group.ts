import type { Cluster, Redis } from 'ioredis';
import type { FleetServer, KillSignal } from './fleet-server.js';
import { ProcessServer, type ProcessServerConfig } from './process-server.js';

/** Clients the group disconnects on stop: a `Redis` or a `Cluster`. */
type GroupClient = Redis | Cluster;

/**
 * The servers of one fleet (independent masters, a cluster, a sentinel
 * group) and the ioredis clients handed out for them: starts them, applies
 * faults by index, and tears everything down once. Each fleet class owns one
 * and adds what its topology means on top.
 */
export class ServerGroup<Config = ProcessServerConfig, Server extends FleetServer = ProcessServer> {
  private readonly list: Server[] = [];
  private readonly clients = new Set<GroupClient>();
  private stopping: Promise<void> | undefined;

  /**
   * @param owner class name used in error messages, e.g. `'RedisCluster'`.
   * @param launch starts one server from its config and resolves once it answers PING.
   */
  constructor(
    readonly owner: string,
    private readonly launch: (config: Config) => Promise<Server>,
  ) {}

  /** A group of local redis-server processes. */
  static ofProcesses(owner: string): ServerGroup {
    return new ServerGroup(owner, (config) => ProcessServer.start(config));
  }

  /** The servers, in start order. */
  get servers(): readonly Server[] {
    return this.list;
  }

  /** Whether {@link ServerGroup.stop} was called. */
  get stopped(): boolean {
    return this.stopping !== undefined;
  }

  /**
   * Starts one server per config in parallel and appends them, in config
   * order, once all answer PING. If one fails, those that did start are torn
   * down before it rejects (servers added earlier stay, for `stop()`).
   */
  async start(configs: readonly Config[]): Promise<Server[]> {
    this.assertNotStopped('start');
    const results = await Promise.allSettled(configs.map((config) => this.launch(config)));
    const started = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failure = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failure !== undefined || this.stopped) {
      await Promise.allSettled(started.map((server) => server.destroy()));
      throw failure?.reason ?? new Error(`${this.owner} was stopped while starting`);
    }
    this.list.push(...started);
    return started;
  }

  /**
   * Server `i` in start order.
   * @throws RangeError for an index outside the group.
   */
  server(i: number): Server {
    const server = Number.isInteger(i) ? this.list[i] : undefined;
    if (server === undefined) {
      throw new RangeError(`server index must be an integer from 0 to ${this.list.length - 1}, got ${String(i)}`);
    }
    return server;
  }

  /** Registers a client to disconnect on stop; it is forgotten once it ends. */
  track<T extends GroupClient>(client: T): T {
    this.assertNotStopped('client');
    this.clients.add(client);
    client.once('end', () => this.clients.delete(client));
    return client;
  }

  /**
   * SIGKILL (a crash) or SIGTERM (graceful shutdown) to server `i`; resolves
   * once it has exited, at once when it is not running.
   * @throws RangeError for a bad index or signal; Error once stopped.
   */
  async kill(i: number, signal: KillSignal): Promise<void> {
    const server = this.server(i);
    this.assertNotStopped('kill');
    if (signal !== 'SIGKILL' && signal !== 'SIGTERM') {
      throw new RangeError(`signal must be 'SIGKILL' or 'SIGTERM', got ${String(signal)}`);
    }
    await server.kill(signal);
  }

  /** SIGSTOP; resolves once the process is stopped. @throws Error when not running or stopped. */
  async pause(i: number): Promise<void> {
    const server = this.server(i);
    this.assertNotStopped('pause');
    await server.pause();
  }

  /** SIGCONT; no-op when not paused. */
  async resume(i: number): Promise<void> {
    const server = this.server(i);
    this.assertNotStopped('resume');
    await server.resume();
  }

  /** Starts server `i` again on its port and data directory (SIGKILL first if it runs); resolves when PING answers. */
  async restart(i: number): Promise<void> {
    const server = this.server(i);
    this.assertNotStopped('restart');
    await server.restart();
  }

  /** @throws Error naming the operation once the group is stopped. */
  assertNotStopped(operation: string): void {
    if (this.stopped) throw new Error(`${this.owner}.${operation}(): it was stopped`);
  }

  /**
   * Disconnects the clients, kills every server (SIGKILL) and removes their
   * data directories. Idempotent: later calls return the first call's promise.
   * @throws AggregateError when some server could not be torn down (the
   * others are torn down anyway).
   */
  stop(): Promise<void> {
    this.stopping ??= this.teardown();
    return this.stopping;
  }

  private async teardown(): Promise<void> {
    const clients = [...this.clients];
    this.clients.clear();
    // A Cluster reaches 'end' only after its node connections closed: wait
    // for it (bounded), so that stop() leaves every client ended.
    const ended = clients.map((client) => (client.status === 'end' ? Promise.resolve() : endOf(client)));
    for (const client of clients) client.disconnect();
    await Promise.all(ended);
    const results = await Promise.allSettled(this.list.map((server) => server.destroy()));
    const errors = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
    if (errors.length > 0) throw new AggregateError(errors, `${this.owner}.stop() could not tear down every server`);
  }
}

/** Bound on a disconnected client reaching 'end'. */
const CLIENT_END_TIMEOUT_MS = 2_000;

function endOf(client: GroupClient): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, CLIENT_END_TIMEOUT_MS);
    client.once('end', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
