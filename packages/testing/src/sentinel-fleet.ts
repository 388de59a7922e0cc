import { Redis, type RedisOptions } from 'ioredis';
import { FailoverFleet, type FleetWaitOptions } from './failover-fleet.js';
import { infoField, queryNode, QUERY_TIMEOUT_MS } from './node-query.js';
import type { ProcessServer, ProcessServerConfig } from './process-server.js';
import { probeRedisServer } from './redis-server-binary.js';
import { RespErrorReply, sendCommands, type RespReply } from './resp-connection.js';
import { resolveSentinelGroupOptions, type RedisSentinelGroupOptions, type ResolvedSentinelGroupOptions } from './sentinel-options.js';
import { ServerGroup } from './server-group.js';
import { pollUntilSettled } from './settle-poll.js';

/** What a node of a {@link RedisSentinelGroup} is. */
export type SentinelGroupRole = 'master' | 'replica' | 'sentinel';

/** One process of a {@link RedisSentinelGroup}. */
export interface SentinelGroupNode {
  /**
   * Position in the group, the same for its whole life: the data nodes first
   * (0 is the initial master, then the replicas), then the Sentinels.
   */
  readonly index: number;
  readonly host: string;
  /** Kept across restarts. */
  readonly port: number;
  /**
   * `'sentinel'`, or for a data node `'master'` / `'replica'` as the
   * Sentinels last said (start, waitForFailover, restart, refresh). A killed
   * master becomes `'replica'` once the Sentinels failed over: that is what
   * it will be when it comes back.
   */
  readonly role: SentinelGroupRole;
  /** Whether the process runs now (read live, unlike `role`). A paused node is running. */
  readonly running: boolean;
}

/** Per-call bound of {@link RedisSentinelGroup.waitForFailover} and {@link RedisSentinelGroup.restart}: `timeoutMs`, by default the group's `waitTimeoutMs`. */
export type SentinelWaitOptions = FleetWaitOptions;

/**
 * Sentinel timers lowered with `SENTINEL DEBUG` (Redis ≥ 7.0; not saved, so set
 * again after a restart): role changes show within a second and a returning
 * old master is converted in ~2 s instead of 10–20 s (see
 * `sentinelRefreshInstanceInfo` in sentinel.c).
 */
const SENTINEL_DEBUG_TIMERS = ['info-period', 1_000, 'publish-period', 250] as const;

/**
 * A master, its replicas and the Sentinels that monitor them, all local
 * `redis-server` processes on free ports (never 6379), for tests, examples
 * and benchmarks. Torn down by {@link RedisSentinelGroup.stop} and killed
 * with the Node process if it dies first (like {@link RedisFleet}). Process
 * backend only.
 *
 * @example
 * ```ts
 * await using group = await RedisSentinelGroup.start({ replicas: 1, sentinels: 3 });
 * const redis = group.client();                // through the Sentinels, closed by the group
 * await redis.set('k', 'v');
 * const old = await group.killMaster();
 * const promoted = await group.waitForFailover(old);
 * await redis.set('k', 'again');               // ioredis asked the Sentinels for the new master
 * await group.restart(old);                    // comes back as a replica of `promoted`
 * ```
 */
export class RedisSentinelGroup extends FailoverFleet<SentinelGroupNode> {
  /** Name the Sentinels monitor the master under (ioredis' `name`). */
  readonly masterName: string;
  /** The Sentinels' addresses (ioredis' `sentinels`). */
  readonly sentinels: readonly { readonly host: string; readonly port: number }[];
  /** Number of processes: 1 + replicas + sentinels. */
  readonly size: number;
  private readonly dataNodeCount: number;
  /** Index of the data node the Sentinels last named master. */
  private masterIndex = 0;

  private constructor(group: ServerGroup, options: ResolvedSentinelGroupOptions) {
    super(group, 'group', options.waitTimeoutMs);
    this.masterName = options.masterName;
    this.dataNodeCount = 1 + options.replicas;
    this.size = group.servers.length;
    this.sentinels = Object.freeze(group.servers.slice(this.dataNodeCount).map(({ host, port }) => Object.freeze({ host, port })));
  }

  /**
   * Starts the master, its replicas and the Sentinels, and resolves once every
   * Sentinel monitors the master and knows the replicas and the other
   * Sentinels. On failure everything started is torn down first.
   * @throws TypeError or RangeError for a bad option, before anything starts.
   * @throws Error when redis-server cannot be run (the message names
   * REDIS_SERVER), or the group is not ready within `waitTimeoutMs`.
   */
  static async start(options: RedisSentinelGroupOptions = {}): Promise<RedisSentinelGroup> {
    const resolved = resolveSentinelGroupOptions(options);
    const binary = await probeRedisServer(resolved.redisServerPath);
    const dataNode = (lines: string[]): ProcessServerConfig => ({
      binary,
      appendonly: resolved.appendonly,
      appendfsync: resolved.appendfsync,
      extraArgs: resolved.extraArgs,
      // Started from a config file, so that the CONFIG REWRITE a Sentinel
      // sends after each REPLICAOF persists the new role across a restart.
      // No 5 s wait for more replicas before a diskless full sync.
      configFile: () => [...lines, 'repl-diskless-sync-delay 0', ''].join('\n'),
    });
    const group = ServerGroup.ofProcesses('RedisSentinelGroup');
    try {
      const [master] = (await group.start([dataNode([])])) as [ProcessServer];
      await group.start(Array.from({ length: resolved.replicas }, () => dataNode([`replicaof ${master.host} ${master.port}`])));
      const name = resolved.masterName;
      const sentinel: ProcessServerConfig = {
        binary,
        appendonly: false,
        appendfsync: resolved.appendfsync,
        extraArgs: [],
        sentinel: true,
        configFile: () =>
          [
            // Explicit, though the default: addresses stay IPs. Redis < 6.2 knows no such option.
            ...(binary.major > 6 || (binary.major === 6 && binary.minor >= 2) ? ['sentinel resolve-hostnames no'] : []),
            `sentinel monitor ${name} ${master.host} ${master.port} ${resolved.quorum}`,
            `sentinel down-after-milliseconds ${name} ${resolved.downAfterMs}`,
            `sentinel failover-timeout ${name} ${resolved.failoverTimeoutMs}`,
            `sentinel parallel-syncs ${name} 1`,
            '',
          ].join('\n'),
      };
      const sentinels = await group.start(Array.from({ length: resolved.sentinels }, () => sentinel));
      await Promise.all(sentinels.map((server) => tuneSentinel(server)));
      const fleet = new RedisSentinelGroup(group, resolved);
      await fleet.settle('the Sentinels to monitor the new group', resolved.waitTimeoutMs, (masterIndex) => masterIndex === 0);
      return fleet;
    } catch (error) {
      await group.stop().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Process `i`: the data nodes come first (0 is the initial master, then the replicas), then the Sentinels.
   * @throws RangeError for an index outside 0 … size − 1.
   */
  node(i: number): SentinelGroupNode {
    const server = this.group.server(i);
    const role: SentinelGroupRole = i >= this.dataNodeCount ? 'sentinel' : i === this.masterIndex ? 'master' : 'replica';
    return Object.freeze({ index: i, host: server.host, port: server.port, role, running: server.isRunning() });
  }

  /**
   * A new ioredis `Redis` that finds the master through the Sentinels
   * (`sentinels` and `name` set by the group, every other option yours).
   * The group disconnects it on {@link RedisSentinelGroup.stop}. ioredis logs
   * connection errors when it has no `'error'` listener: in fault tests add
   * `redis.on('error', () => {})`.
   * @throws Error once the group is stopped.
   */
  client(options: RedisOptions = {}): Redis {
    this.group.assertNotStopped('client');
    const sentinels = this.sentinels.map(({ host, port }) => ({ host, port }));
    return this.group.track(new Redis({ ...options, sentinels, name: this.masterName }));
  }

  /**
   * Asks the running Sentinels, in order, `SENTINEL GET-MASTER-ADDR-BY-NAME`
   * and returns the first answer.
   * @throws Error when no Sentinel answers.
   */
  async currentMaster(): Promise<{ host: string; port: number }> {
    this.group.assertNotStopped('currentMaster');
    const failures: string[] = [];
    for (const server of this.sentinelServers().filter((candidate) => candidate.isRunning() && !candidate.isPaused())) {
      try {
        return await masterAddress(server, this.masterName);
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
    throw new Error(`RedisSentinelGroup.currentMaster(): no Sentinel answered (${failures.join('; ') || 'none running'})`);
  }

  /**
   * Re-reads which data node the Sentinels name master (see {@link RedisSentinelGroup.currentMaster}).
   * @throws Error when no Sentinel answers or it names a node outside the group.
   */
  async refresh(): Promise<SentinelGroupNode[]> {
    this.masterIndex = this.dataIndexOf(await this.currentMaster());
    return this.nodes();
  }

  /**
   * Kills the master the Sentinels currently name with SIGKILL (a crash) and
   * resolves once it has exited; returns it (pass it to
   * {@link RedisSentinelGroup.waitForFailover} and {@link RedisSentinelGroup.restart}).
   * @throws Error when no Sentinel answers, or once the group is stopped.
   */
  async killMaster(): Promise<SentinelGroupNode> {
    this.group.assertNotStopped('killMaster');
    this.masterIndex = this.dataIndexOf(await this.currentMaster());
    const killed = this.node(this.masterIndex);
    await this.group.kill(killed.index, 'SIGKILL');
    return this.node(killed.index);
  }

  /**
   * Resolves once the Sentinels failed over from `oldMaster`: every running
   * Sentinel names the same other data node as master, with no failover
   * still in progress; that node answers `ROLE` as master; and every other
   * running data node is its replica, in sync, and seen healthy by every
   * Sentinel. Returns the new master.
   * @param oldMaster the node (as returned by killMaster) or its index;
   * @default the master the group last knew of
   * @throws Error at once when there is no replica to promote; Error saying
   * what was last missing when no failover is seen within `timeoutMs`.
   */
  async waitForFailover(oldMaster?: number | SentinelGroupNode, options: SentinelWaitOptions = {}): Promise<SentinelGroupNode> {
    this.group.assertNotStopped('waitForFailover');
    const old = oldMaster === undefined ? this.masterIndex : this.indexOf(oldMaster);
    if (old >= this.dataNodeCount) throw new RangeError(`node ${old} is a Sentinel, not a data node`);
    if (this.dataNodeCount < 2) throw new Error('the group has no replica that could be promoted');
    const port = this.group.server(old).port;
    await this.settle(`the Sentinels to fail over from the master on port ${port}`, this.timeout(options), (masterIndex) => masterIndex !== old);
    return this.node(this.masterIndex);
  }

  /**
   * Starts a process again on the same port and data directory (SIGKILL
   * first if it runs) and resolves once the group settled around it (a
   * failed-over master comes back as a replica).
   * @throws RangeError for a bad index; Error when the group has not settled within `timeoutMs`.
   */
  async restart(node: number | SentinelGroupNode, options: SentinelWaitOptions = {}): Promise<SentinelGroupNode> {
    const index = this.indexOf(node);
    await this.group.restart(index);
    if (index >= this.dataNodeCount) await tuneSentinel(this.group.server(index));
    const port = this.group.server(index).port;
    await this.settle(`the node on port ${port} to rejoin`, this.timeout(options), () => true);
    return this.node(index);
  }

  /**
   * Resolves once the group is stable (the conditions of
   * {@link RedisSentinelGroup.restart}) and returns the nodes with roles
   * re-read, e.g. after resuming a paused master that was failed over, to
   * wait until the Sentinels made it a replica.
   * @throws Error saying what was last missing when `timeoutMs` passes.
   */
  async waitUntilStable(options: SentinelWaitOptions = {}): Promise<SentinelGroupNode[]> {
    this.group.assertNotStopped('waitUntilStable');
    await this.settle('the group to be stable', this.timeout(options), () => true);
    return this.nodes();
  }

  private sentinelServers(): readonly ProcessServer[] {
    return this.group.servers.slice(this.dataNodeCount);
  }

  private dataIndexOf(address: { host: string; port: number }): number {
    const index = this.group.servers.findIndex((server, i) => i < this.dataNodeCount && server.port === address.port);
    if (index < 0) throw new Error(`the Sentinels name ${address.host}:${address.port}, which is not a data node of this group`);
    return index;
  }

  /**
   * Polls until the group settled (every running Sentinel names the same
   * healthy master, knows the others and sees every other data node as a
   * linked replica; ROLE agrees; paused processes left out) and `accept`
   * holds for the master's index, then records that master.
   * @throws Error saying what was last missing when `timeoutMs` passes.
   */
  private async settle(what: string, timeoutMs: number, accept: (masterIndex: number) => boolean): Promise<void> {
    this.masterIndex = await pollUntilSettled(
      this.group,
      what,
      timeoutMs,
      () => this.observe(),
      (seen) => (accept(seen) ? undefined : `the Sentinels still name the master on port ${this.group.server(seen).port}`),
    );
  }

  /** The index of the master everything agrees on, or what keeps the group from agreeing. */
  private async observe(): Promise<number | string> {
    // Paused processes answer nothing: left out like dead ones.
    const live = (server: ProcessServer): boolean => server.isRunning() && !server.isPaused();
    const sentinels = this.sentinelServers().filter(live);
    if (sentinels.length === 0) return 'no Sentinel is running';
    const views = await Promise.all(sentinels.map((server) => readSentinelView(server, this.masterName)));
    let masterPort: number | undefined;
    for (const [i, view] of views.entries()) {
      const port = (sentinels[i] as ProcessServer).port;
      if (typeof view === 'string') return view;
      if (masterPort === undefined) masterPort = view.masterPort;
      else if (view.masterPort !== masterPort) return `Sentinels on ports ${(sentinels[0] as ProcessServer).port} and ${port} name different masters`;
      if (view.masterFlags !== 'master') return `Sentinel on port ${port} flags the master ${view.masterFlags}`;
      if (view.otherSentinels !== this.sentinels.length - 1) {
        return `Sentinel on port ${port} knows ${view.otherSentinels} of ${this.sentinels.length - 1} other Sentinels`;
      }
    }
    const masterIndex = this.group.servers.findIndex((server, i) => i < this.dataNodeCount && server.port === masterPort);
    const master = this.group.servers[masterIndex];
    if (master === undefined) return `the Sentinels name port ${String(masterPort)}, which is not a data node of this group`;
    if (!live(master)) return `the Sentinels still name the master on port ${master.port}, which is not running or paused`;
    for (const [i, server] of this.group.servers.slice(0, this.dataNodeCount).entries()) {
      if (!live(server)) continue;
      const role = await readRole(server);
      if (i === masterIndex) {
        if (role !== 'master') return `the master the Sentinels name (port ${server.port}) answers ROLE ${role}`;
        continue;
      }
      if (role !== `replica of ${masterPort}`) return `data node on port ${server.port} is ${role}, not a synced replica of port ${masterPort}`;
      for (const [s, view] of views.entries()) {
        const replica = typeof view === 'string' ? undefined : view.replicas.get(server.port);
        if (replica === undefined || replica.flags !== 'slave' || replica.linkStatus !== 'ok') {
          return `Sentinel on port ${(sentinels[s] as ProcessServer).port} does not see the replica on port ${server.port} as healthy yet`;
        }
      }
    }
    return masterIndex;
  }
}

/** Lowers the Sentinel's timers ({@link SENTINEL_DEBUG_TIMERS}); servers before 7.0 lack the command, which is fine. */
async function tuneSentinel(server: ProcessServer): Promise<void> {
  const [reply] = await sendCommands(server.host, server.port, [['SENTINEL', 'DEBUG', ...SENTINEL_DEBUG_TIMERS]], QUERY_TIMEOUT_MS);
  if (reply instanceof RespErrorReply && !/unknown|syntax/i.test(reply.message)) {
    throw new Error(`SENTINEL DEBUG on port ${server.port} failed: ${reply.message}`);
  }
}

async function masterAddress(server: ProcessServer, name: string): Promise<{ host: string; port: number }> {
  const reply = await queryNode(server.host, server.port, ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name]);
  if (!Array.isArray(reply) || typeof reply[0] !== 'string' || typeof reply[1] !== 'string') {
    throw new Error(`Sentinel on port ${server.port} does not know master ${name}`);
  }
  return { host: reply[0], port: Number(reply[1]) };
}

interface SentinelView {
  readonly masterPort: number;
  /** `flags` of SENTINEL MASTER: exactly `master` when it is up and no failover runs. */
  readonly masterFlags: string;
  readonly otherSentinels: number;
  /** SENTINEL REPLICAS by port: their `flags` and `master-link-status`. */
  readonly replicas: ReadonlyMap<number, { readonly flags: string; readonly linkStatus: string }>;
}

async function readSentinelView(server: ProcessServer, name: string): Promise<SentinelView | string> {
  try {
    const replies = await sendCommands(
      server.host,
      server.port,
      [
        ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name],
        ['SENTINEL', 'MASTER', name],
        ['SENTINEL', 'REPLICAS', name],
      ],
      QUERY_TIMEOUT_MS,
    );
    const [address, master, replicas] = replies;
    for (const reply of replies) {
      if (reply instanceof RespErrorReply) return `Sentinel on port ${server.port} answered ${reply.message}`;
    }
    if (!Array.isArray(address) || !Array.isArray(master) || !Array.isArray(replicas)) {
      return `Sentinel on port ${server.port} does not monitor ${name}`;
    }
    const fields = pairs(master);
    const byPort = new Map<number, { flags: string; linkStatus: string }>();
    for (const replica of replicas) {
      if (!Array.isArray(replica)) continue;
      const entry = pairs(replica);
      byPort.set(Number(entry.get('port')), { flags: entry.get('flags') ?? '', linkStatus: entry.get('master-link-status') ?? '' });
    }
    return {
      masterPort: Number(address[1]),
      masterFlags: fields.get('flags') ?? '',
      otherSentinels: Number(fields.get('num-other-sentinels') ?? NaN),
      replicas: byPort,
    };
  } catch (error) {
    return `Sentinel on port ${server.port} did not answer (${(error as Error).message})`;
  }
}

/** `'master'`, `'replica of <port>'` (linked and synced), or what else `ROLE` and `INFO replication` say. */
async function readRole(server: ProcessServer): Promise<string> {
  try {
    const [role, replication] = await sendCommands(server.host, server.port, [['ROLE'], ['INFO', 'replication']], QUERY_TIMEOUT_MS);
    if (!Array.isArray(role) || typeof replication !== 'string') return 'not answering ROLE';
    if (role[0] === 'master') return 'master';
    // ['slave', host, port, 'connect' | 'connecting' | 'sync' | 'connected', offset]
    if (role[0] !== 'slave') return String(role[0]);
    if (role[3] !== 'connected' || infoField(replication, 'master_sync_in_progress') !== '0') return `replica still ${String(role[3])}`;
    return `replica of ${String(role[2])}`;
  } catch (error) {
    return `not answering (${(error as Error).message})`;
  }
}

/** A flat `[key, value, key, value, …]` reply as a map. */
function pairs(reply: readonly RespReply[]): Map<string, string> {
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < reply.length; i += 2) map.set(String(reply[i]), String(reply[i + 1]));
  return map;
}
