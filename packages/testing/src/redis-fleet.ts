import { Redis, type RedisOptions } from 'ioredis';
import { chooseBackend } from './backend-detection.js';
import { ContainerServer } from './container-server.js';
import { resolveFleetOptions, type RedisFleetOptions } from './fleet-options.js';
import type { FleetServer, KillSignal } from './fleet-server.js';
import { ServerGroup } from './server-group.js';
import { ProcessServer } from './process-server.js';
import { probeRedisServer } from './redis-server-binary.js';
import { RespConnection, RespErrorReply, sendCommands } from './resp-connection.js';

/** Bound on the fleet's own admin commands (CLIENT PAUSE, the PING before DEBUG SLEEP). */
const ADMIN_TIMEOUT_MS = 5_000;

/** What the servers of a fleet understand, by version. */
interface ServerFeatures {
  /** `CLIENT PAUSE <ms> ALL` (Redis ≥ 6.2); older servers take no mode and pause all. */
  readonly clientPauseMode: boolean;
}

/**
 * Real, independent `redis-server` masters for tests, examples and
 * benchmarks: each on its own free port (never 6379) with its own data
 * directory, torn down by {@link RedisFleet.stop}, and killed even when the
 * Node process dies without calling it.
 *
 * @example
 * ```ts
 * await using fleet = await RedisFleet.start({ size: 3 });
 * const redis = fleet.client(0);          // closed by the fleet
 * await fleet.kill(1);                     // crash a master
 * await fleet.restart(1);                  // same port, same data dir
 * ```
 */
export class RedisFleet implements AsyncDisposable {
  /** Number of servers. */
  readonly size: number;
  /** The backend the servers run on (`'auto'` resolved). */
  readonly backend: 'process' | 'container';
  private readonly group: ServerGroup<void, FleetServer>;
  private readonly features: ServerFeatures;
  private readonly sleepers = new Set<RespConnection>();
  private stopping: Promise<void> | undefined;

  private constructor(backend: 'process' | 'container', group: ServerGroup<void, FleetServer>, features: ServerFeatures) {
    this.backend = backend;
    this.group = group;
    this.size = group.servers.length;
    this.features = features;
  }

  /**
   * Starts `size` servers in parallel and resolves once each answers PING.
   * If any fails to start, the others are torn down before it rejects.
   * @throws TypeError or RangeError for a bad option, before anything starts.
   * @throws Error when redis-server cannot be run (message names REDIS_SERVER)
   * or a server does not answer within 10 s (message holds its log tail).
   */
  static async start(options: RedisFleetOptions = {}): Promise<RedisFleet> {
    const resolved = resolveFleetOptions(options);
    const backend = await chooseBackend(resolved.backend);
    const shared = { appendonly: resolved.appendonly, appendfsync: resolved.appendfsync, extraArgs: resolved.extraArgs };
    let group: ServerGroup<void, FleetServer>;
    let features: ServerFeatures;
    if (backend === 'process') {
      const binary = await probeRedisServer(resolved.redisServerPath);
      features = { clientPauseMode: binary.major > 6 || (binary.major === 6 && binary.minor >= 2) };
      group = new ServerGroup('RedisFleet', () => ProcessServer.start({ ...shared, binary }));
    } else {
      features = { clientPauseMode: true };
      group = new ServerGroup('RedisFleet', () => ContainerServer.start(shared));
    }
    await group.start(Array.from({ length: resolved.size }, () => undefined));
    return new RedisFleet(backend, group, features);
  }

  /**
   * URL of server `i`, e.g. `'redis://127.0.0.1:41234'`.
   * @throws RangeError for an index outside 0…size−1.
   */
  url(i = 0): string {
    const server = this.server(i);
    return `redis://${server.host}:${server.port}`;
  }

  /** URLs of all servers, in index order. */
  urls(): string[] {
    return this.group.servers.map((_, i) => this.url(i));
  }

  /**
   * Host port of server `i`; it stays the same across kill and restart.
   * @throws RangeError for an index outside 0…size−1.
   */
  port(i = 0): number {
    return this.server(i).port;
  }

  /**
   * A new ioredis connection to server `i` (`host` and `port` set by the
   * fleet, every other option yours). The fleet disconnects it on
   * {@link RedisFleet.stop}; you may quit it earlier. ioredis defaults apply:
   * it reconnects after a kill and retries commands, and logs connection
   * errors when it has no 'error' listener.
   * @throws RangeError for a bad index; Error once the fleet is stopped.
   */
  client(i = 0, options: RedisOptions = {}): Redis {
    const server = this.server(i);
    this.assertNotStopped('client');
    return this.group.track(new Redis({ ...options, host: server.host, port: server.port }));
  }

  /**
   * Kills server `i` with `signal` and resolves once it has exited. SIGKILL
   * is a crash (no AOF fsync beyond `appendfsync`); SIGTERM is Redis's
   * graceful shutdown. Resolves at once when the server is not running.
   * Clients keep their ports: new connections are refused until restart.
   * @throws RangeError for a bad index; Error once the fleet is stopped or
   * when the server does not exit within 30 s.
   */
  async kill(i: number, signal: KillSignal = 'SIGKILL'): Promise<void> {
    await this.group.kill(i, signal);
  }

  /**
   * Starts server `i` again on the same port with the same data directory
   * (so with `appendonly` its data survives) and resolves once PING answers
   * (after the AOF was loaded). A server that is still running is first
   * killed with SIGKILL, as in a crash and restart.
   * @throws RangeError for a bad index; Error once the fleet is stopped or
   * when the server does not answer within 10 s.
   */
  async restart(i: number): Promise<void> {
    await this.group.restart(i);
  }

  /**
   * Freezes server `i` (SIGSTOP; `docker pause` for a container): it keeps
   * its connections and accepts new ones at the TCP level, but answers
   * nothing until {@link RedisFleet.resume}. Resolves once the process is
   * stopped (checked in /proc on Linux).
   * @throws RangeError for a bad index; Error when the server is not running
   * or the fleet is stopped.
   */
  async pause(i: number): Promise<void> {
    await this.group.pause(i);
  }

  /**
   * Continues server `i` after {@link RedisFleet.pause} (SIGCONT); resolves
   * at once when it is not paused.
   * @throws RangeError for a bad index; Error once the fleet is stopped.
   */
  async resume(i: number): Promise<void> {
    await this.group.resume(i);
  }

  /**
   * Sends `CLIENT PAUSE <ms> ALL` to server `i` and resolves once confirmed:
   * for `ms` the running server holds every client's commands (`pause()`
   * freezes the process instead).
   * @throws RangeError for a bad index or `ms` (an integer ≥ 0); Error when
   * Redis rejects the command or does not answer within 5 s.
   */
  async clientPause(i: number, ms: number): Promise<void> {
    const server = this.server(i);
    this.assertNotStopped('clientPause');
    if (!Number.isInteger(ms) || ms < 0) throw new RangeError(`ms must be an integer ≥ 0, got ${String(ms)}`);
    const command = this.features.clientPauseMode ? ['CLIENT', 'PAUSE', ms, 'ALL'] : ['CLIENT', 'PAUSE', ms];
    const [reply] = await sendCommands(server.host, server.port, [command], ADMIN_TIMEOUT_MS);
    if (reply instanceof RespErrorReply) throw new Error(`CLIENT PAUSE failed on ${this.url(i)}: ${reply.message}`);
  }

  /**
   * Makes server `i` block its event loop for `seconds` (`DEBUG SLEEP`), as a
   * long script would. Resolves once the command is handed to the kernel
   * (after a PING on its own connection), not when the sleep ends: on loopback
   * any command sent afterwards is served only after the sleep (through a
   * container's port forwarding, likely but not certain).
   * @throws RangeError for a bad index or `seconds` (a finite number > 0);
   * Error when the server does not answer the PING within 5 s.
   */
  async debugSleep(i: number, seconds: number): Promise<void> {
    const server = this.server(i);
    this.assertNotStopped('debugSleep');
    if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) {
      throw new RangeError(`seconds must be a finite number > 0, got ${String(seconds)}`);
    }
    const connection = await RespConnection.connect(server.host, server.port, ADMIN_TIMEOUT_MS);
    this.sleepers.add(connection);
    void connection.closed().then(() => this.sleepers.delete(connection));
    try {
      const pong = await connection.call(['PING'], ADMIN_TIMEOUT_MS);
      if (pong !== 'PONG') throw new Error(`PING before DEBUG SLEEP got ${String(pong)}`);
      // Redis ≥ 7 refuses DEBUG unless enable-debug-command is on; the fleet
      // turns it on, but extraArgs could turn it off: the reply is not awaited.
      await connection.send(['DEBUG', 'SLEEP', seconds], () => connection.destroy());
    } catch (error) {
      connection.destroy();
      throw error;
    }
    // The reply comes after the sleep; it must not keep the process alive.
    connection.unref();
  }

  /**
   * True while server `i` runs: from its start (or restart) until it is
   * killed or dies; a paused server is running.
   * @throws RangeError for a bad index.
   */
  isRunning(i: number): boolean {
    return this.server(i).isRunning();
  }

  /**
   * Disconnects the clients made by {@link RedisFleet.client}, kills every
   * server (SIGKILL) and removes their data directories. Idempotent: later
   * calls return the first call's promise.
   * @throws AggregateError when some server could not be torn down (the
   * others are torn down anyway).
   */
  stop(): Promise<void> {
    this.stopping ??= this.teardown();
    return this.stopping;
  }

  /** Same as {@link RedisFleet.stop}, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  private async teardown(): Promise<void> {
    for (const connection of this.sleepers) connection.destroy();
    this.sleepers.clear();
    await this.group.stop();
  }

  private server(i: number): FleetServer {
    return this.group.server(i);
  }

  private assertNotStopped(operation: string): void {
    if (this.stopping !== undefined) throw new Error(`RedisFleet.${operation}(): the fleet was stopped`);
    this.group.assertNotStopped(operation);
  }
}
