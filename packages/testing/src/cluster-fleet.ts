import { Cluster, type ClusterOptions } from 'ioredis';
import { createCluster } from './cluster-create.js';
import { parseClusterNodes, slotInRanges, type ClusterNodesEntry, type ClusterRole } from './cluster-nodes.js';
import { resolveClusterOptions, type RedisClusterOptions, type ResolvedClusterOptions } from './cluster-options.js';
import { FailoverFleet, type FleetWaitOptions } from './failover-fleet.js';
import { CLUSTER_SLOTS, keySlot } from './key-slot.js';
import { infoField, QUERY_TIMEOUT_MS, queryText } from './node-query.js';
import type { ProcessServer, ProcessServerConfig } from './process-server.js';
import { probeRedisServer } from './redis-server-binary.js';
import { RespErrorReply, sendCommands } from './resp-connection.js';
import { ServerGroup } from './server-group.js';
import { pollUntilSettled } from './settle-poll.js';

/** One node of a {@link RedisCluster}, as the cluster last agreed on it. */
export interface ClusterNode {
  /** Position in start order, 0 … size − 1; the same for the cluster's whole life. */
  readonly index: number;
  readonly host: string;
  /** Client port; the cluster bus listens on port + 10000. Kept across restarts. */
  readonly port: number;
  /** Cluster node id (40 hex characters), kept across restarts (it lives in nodes.conf). */
  readonly id: string;
  /**
   * `'master'` or `'replica'` as of the last topology the fleet read (start,
   * waitForFailover, restart, refresh). A killed master keeps `'master'`
   * (with no slots once a replica took them over) until it is restarted.
   */
  readonly role: ClusterRole;
  /** A replica's master id; `undefined` for a master. */
  readonly masterId: string | undefined;
  /** Slot ranges a master serves, inclusive `[first, last]`; empty for a replica. */
  readonly slots: readonly (readonly [number, number])[];
  /** Whether the process runs now (read live, unlike the rest). A paused node is running. */
  readonly running: boolean;
}

/** Per-call bound of {@link RedisCluster.waitForFailover} and {@link RedisCluster.restart}: `timeoutMs`, by default the cluster's `waitTimeoutMs`. */
export type ClusterWaitOptions = FleetWaitOptions;

/** What the fleet knows of a node besides its process: the last agreed view. */
interface NodeState {
  readonly id: string;
  readonly role: ClusterRole;
  readonly masterId: string | undefined;
  readonly slots: readonly (readonly [number, number])[];
}

/** The configuration every answering node agreed on, by port. */
type Topology = ReadonlyMap<number, NodeState>;

/**
 * A real Redis Cluster of local `redis-server` processes for tests, examples
 * and benchmarks: `masters × (1 + replicasPerMaster)` nodes on free ports
 * (never 6379; each port + 10000, its cluster bus, free too), joined by
 * `redis-cli --cluster create`, torn down by {@link RedisCluster.stop} and
 * killed with the Node process if it dies first (like {@link RedisFleet}).
 * Process backend only.
 *
 * @example
 * ```ts
 * await using cluster = await RedisCluster.start({ masters: 3, replicasPerMaster: 1 });
 * const redis = cluster.client();                      // an ioredis Cluster, closed by the fleet
 * await redis.set('{order:1}:lock', 'me');
 * const old = await cluster.killMaster(cluster.masterForKey('{order:1}:lock'));
 * const promoted = await cluster.waitForFailover(old); // a replica of it now serves its slots
 * await cluster.restart(old);                          // rejoins as a replica of `promoted`
 * ```
 */
export class RedisCluster extends FailoverFleet<ClusterNode> {
  /** Number of nodes: masters × (1 + replicasPerMaster). */
  readonly size: number;
  /** Every node's address, for `new Cluster(startupNodes)` of ioredis. */
  readonly startupNodes: readonly { readonly host: string; readonly port: number }[];
  private states: readonly NodeState[];

  private constructor(group: ServerGroup, options: ResolvedClusterOptions, topology: Topology) {
    super(group, 'cluster', options.waitTimeoutMs);
    this.size = group.servers.length;
    this.startupNodes = Object.freeze(group.servers.map(({ host, port }) => Object.freeze({ host, port })));
    this.states = this.statesFrom(topology);
  }

  /**
   * Starts the nodes, runs `redis-cli --cluster create` and resolves once the
   * cluster is ok, agreed and synced. On failure every node is torn down first.
   * @throws TypeError or RangeError for a bad option, before anything starts.
   * @throws Error when redis-server or redis-cli cannot be run (the message
   * names REDIS_SERVER or REDIS_CLI), or the cluster is not ready within
   * `waitTimeoutMs` (the message says what was last missing).
   */
  static async start(options: RedisClusterOptions = {}): Promise<RedisCluster> {
    const resolved = resolveClusterOptions(options);
    const binary = await probeRedisServer(resolved.redisServerPath);
    const config: ProcessServerConfig = {
      binary,
      appendonly: resolved.appendonly,
      appendfsync: resolved.appendfsync,
      extraArgs: resolved.extraArgs,
      clusterBus: true,
      // nodes.conf holds the node's id and its view of the cluster: kept in
      // the data directory, so a restarted node rejoins as the same node.
      configFile: (dir) =>
        [
          'cluster-enabled yes',
          `cluster-config-file ${quoteConfigValue(`${dir}/nodes.conf`)}`,
          `cluster-node-timeout ${resolved.nodeTimeoutMs}`,
          // A master waits 5 s by default before a diskless full sync, for
          // more replicas to join it: here it would only slow every start
          // and every rejoin down.
          'repl-diskless-sync-delay 0',
          '',
        ].join('\n'),
    };
    const size = resolved.masters * (1 + resolved.replicasPerMaster);
    const group = ServerGroup.ofProcesses('RedisCluster');
    try {
      const servers = await group.start(Array.from({ length: size }, () => config));
      // redis-cli makes the first `masters` addresses masters, the rest replicas.
      await createCluster(
        resolved.redisCliPath,
        servers.map((server) => `${server.host}:${server.port}`),
        resolved.replicasPerMaster,
        resolved.waitTimeoutMs,
      );
      const topology = await settle(group, 'the new cluster to be ready', resolved.waitTimeoutMs, (seen) => {
        const states = [...seen.values()];
        const masters = states.filter((state) => state.role === 'master' && state.slots.length > 0).length;
        const replicas = states.filter((state) => state.role === 'replica').length;
        return masters === resolved.masters && replicas === size - resolved.masters;
      });
      return new RedisCluster(group, resolved, topology);
    } catch (error) {
      await group.stop().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Node `i` (start order), with its role and slots from the last topology read.
   * @throws RangeError for an index outside 0 … size − 1.
   */
  node(i: number): ClusterNode {
    const server = this.group.server(i);
    const state = this.states[i] as NodeState;
    return Object.freeze({ index: i, host: server.host, port: server.port, ...state, running: server.isRunning() });
  }

  /** The masters that serve slots, ordered by their lowest slot (so `masters()[0]` serves slot 0). */
  masters(): ClusterNode[] {
    return this.nodes()
      .filter((node) => node.role === 'master' && node.slots.length > 0)
      .sort((a, b) => lowestSlot(a) - lowestSlot(b));
  }

  /** The replicas, in index order. */
  replicas(): ClusterNode[] {
    return this.nodes().filter((node) => node.role === 'replica');
  }

  /**
   * The master serving `slot`, as of the last topology read.
   * @throws RangeError for a slot outside 0 … 16383.
   */
  masterForSlot(slot: number): ClusterNode {
    if (!Number.isInteger(slot) || slot < 0 || slot >= CLUSTER_SLOTS) {
      throw new RangeError(`slot must be an integer from 0 to ${CLUSTER_SLOTS - 1}, got ${String(slot)}`);
    }
    const master = this.masters().find((node) => slotInRanges(slot, node.slots));
    if (master === undefined) throw new Error(`no master serves slot ${slot} (call refresh() after changing the cluster)`);
    return master;
  }

  /** The master serving `key`'s slot (hash tags honoured), as of the last topology read. */
  masterForKey(key: string | Uint8Array): ClusterNode {
    return this.masterForSlot(keySlot(key));
  }

  /**
   * A new ioredis `Cluster` on {@link RedisCluster.startupNodes} with your
   * options. The fleet disconnects it on {@link RedisCluster.stop}. ioredis
   * logs connection errors when it has no `'error'` listener: in fault tests
   * add `cluster.on('error', () => {})`.
   * @throws Error once the cluster is stopped.
   */
  client(options: ClusterOptions = {}): Cluster {
    this.group.assertNotStopped('client');
    return this.group.track(
      new Cluster(
        this.startupNodes.map(({ host, port }) => ({ host, port })),
        options,
      ),
    );
  }

  /**
   * Reads `CLUSTER NODES` from the first running node that answers and
   * updates roles and slots from it (without waiting for the nodes to agree).
   * @throws Error when no running node answers.
   */
  async refresh(): Promise<ClusterNode[]> {
    this.group.assertNotStopped('refresh');
    const failures: string[] = [];
    for (const server of this.group.servers.filter((candidate) => candidate.isRunning() && !candidate.isPaused())) {
      try {
        const entries = parseClusterNodes(await queryText(server.host, server.port, ['CLUSTER', 'NODES']));
        this.states = this.statesFrom(topologyOf(entries));
        return this.nodes();
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
    throw new Error(`RedisCluster.refresh(): no running node answered CLUSTER NODES (${failures.join('; ') || 'none running'})`);
  }

  /**
   * Kills a master with SIGKILL (a crash) and resolves once its process has
   * exited; returns it as it was (pass it to {@link RedisCluster.waitForFailover}
   * and {@link RedisCluster.restart}).
   * @param master a node that serves slots, or an index into {@link RedisCluster.masters}
   * @throws RangeError for an index outside `masters()`; Error when the node
   * is not a master serving slots, or once the cluster is stopped.
   */
  async killMaster(master: number | ClusterNode): Promise<ClusterNode> {
    this.group.assertNotStopped('killMaster');
    const masters = this.masters();
    let target: ClusterNode | undefined;
    if (typeof master === 'number') {
      target = Number.isInteger(master) ? masters[master] : undefined;
      if (target === undefined) {
        throw new RangeError(`master index must be an integer from 0 to ${masters.length - 1}, got ${String(master)}`);
      }
    } else {
      target = masters.find((node) => node.index === this.indexOf(master));
      if (target === undefined) throw new Error(`node on port ${master.port} is not a master serving slots`);
    }
    await this.group.kill(target.index, 'SIGKILL');
    return this.node(target.index);
  }

  /**
   * Resolves once a replica of `oldMaster` was promoted: every running node
   * reports `cluster_state:ok`, all agree that the promoted node serves the
   * old master's slots, and every running replica is in sync. Returns the new
   * master. Kill or pause the old master first: a paused master is failed
   * over too, once `nodeTimeoutMs` passes, and becomes a replica when resumed.
   * @param oldMaster the node (as returned by killMaster) or its node index
   * @throws Error at once when `oldMaster` had no replica; Error saying what
   * was last missing when no promotion is seen within `timeoutMs`.
   */
  async waitForFailover(oldMaster: number | ClusterNode, options: ClusterWaitOptions = {}): Promise<ClusterNode> {
    this.group.assertNotStopped('waitForFailover');
    const index = this.indexOf(oldMaster);
    const old = this.states[index] as NodeState;
    const port = this.group.server(index).port;
    const candidates = new Set(this.states.flatMap((state) => (state.masterId === old.id ? [state.id] : [])));
    if (old.role !== 'master' || old.slots.length === 0) throw new Error(`node on port ${port} is not a master serving slots`);
    if (candidates.size === 0) throw new Error(`master on port ${port} has no replica that could be promoted`);
    const firstSlot = lowestSlot(old);
    const timeoutMs = this.timeout(options);
    const topology = await settle(this.group, `a replica of the master on port ${port} to be promoted`, timeoutMs, (seen) =>
      [...seen.values()].some((state) => candidates.has(state.id) && state.role === 'master' && slotInRanges(firstSlot, state.slots)),
    );
    this.states = this.statesFrom(topology);
    const promoted = this.states.findIndex((state) => candidates.has(state.id) && slotInRanges(firstSlot, state.slots));
    return this.node(promoted);
  }

  /**
   * Starts a node again on the same port and data directory (SIGKILL first
   * if it runs) and resolves once the cluster settled around it. A failed-over
   * master comes back as a replica of the node that took its slots.
   * @throws RangeError for a bad index; Error when it has not rejoined within `timeoutMs`.
   */
  async restart(node: number | ClusterNode, options: ClusterWaitOptions = {}): Promise<ClusterNode> {
    const index = this.indexOf(node);
    await this.group.restart(index);
    const port = this.group.server(index).port;
    const topology = await settle(this.group, `the node on port ${port} to rejoin`, this.timeout(options), () => true);
    this.states = this.statesFrom(topology);
    return this.node(index);
  }

  /**
   * Resolves once the cluster is stable (the conditions of
   * {@link RedisCluster.restart}) and returns the nodes with their roles
   * re-read, e.g. after resuming a paused master that was failed over, to
   * wait until it rejoined as a replica.
   * @throws Error saying what was last missing when `timeoutMs` passes.
   */
  async waitUntilStable(options: ClusterWaitOptions = {}): Promise<ClusterNode[]> {
    this.group.assertNotStopped('waitUntilStable');
    const topology = await settle(this.group, 'the cluster to be stable', this.timeout(options), () => true);
    this.states = this.statesFrom(topology);
    return this.nodes();
  }

  private statesFrom(topology: Topology): NodeState[] {
    return this.group.servers.map((server, i) => topology.get(server.port) ?? (this.states[i] as NodeState));
  }
}

function lowestSlot(node: Pick<NodeState, 'slots'>): number {
  return Math.min(...node.slots.map(([first]) => first));
}

/** A config file value in double quotes (redis.conf's own escaping). */
function quoteConfigValue(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function topologyOf(entries: readonly ClusterNodesEntry[]): Map<number, NodeState> {
  const topology = new Map<number, NodeState>();
  for (const entry of entries) {
    if (entry.role === undefined) continue;
    topology.set(entry.port, { id: entry.id, role: entry.role, masterId: entry.masterId, slots: entry.slots });
  }
  return topology;
}

/** One key per node (id, port, role, master, slots), sorted: equal when two nodes see the same configuration. */
function configurationKey(entries: readonly ClusterNodesEntry[]): string {
  return entries
    .map((entry) => `${entry.id} ${entry.port} ${entry.role ?? '?'} ${entry.masterId ?? '-'} ${entry.slots.map((r) => r.join('-')).join(',')}`)
    .sort()
    .join('\n');
}

/**
 * Polls the running nodes until the cluster settled (all `cluster_state:ok`,
 * no handshake or failing node, one agreed configuration, every replica
 * linked and synced; paused nodes left out) and `accept` holds for it; returns it.
 * @throws Error saying what was last missing when `timeoutMs` passes.
 */
function settle(group: ServerGroup, what: string, timeoutMs: number, accept: (topology: Topology) => boolean): Promise<Topology> {
  return pollUntilSettled(
    group,
    what,
    timeoutMs,
    () => observe(group),
    (seen) => (accept(seen) ? undefined : 'the agreed configuration does not show it yet'),
  );
}

/** The configuration all running nodes agree on, or what keeps them from agreeing. */
async function observe(group: ServerGroup): Promise<Topology | string> {
  // A paused node answers nothing, and the others see it fail like a dead one.
  const running = group.servers.filter((server) => server.isRunning() && !server.isPaused());
  if (running.length === 0) return 'no node is running';
  const runningPorts = new Set(running.map((server) => server.port));
  const views = await Promise.all(running.map((server) => readView(server)));
  let agreed: { key: string; entries: ClusterNodesEntry[] } | undefined;
  for (const [i, view] of views.entries()) {
    const port = (running[i] as ProcessServer).port;
    if (typeof view === 'string') return view;
    if (view.state !== 'ok') return `node on port ${port} reports cluster_state:${view.state}`;
    if (view.entries.length !== group.servers.length || view.entries.some((entry) => entry.joining || entry.role === undefined)) {
      return `node on port ${port} does not know every node yet`;
    }
    const failing = view.entries.find((entry) => entry.failing && runningPorts.has(entry.port));
    if (failing !== undefined) return `node on port ${port} sees the running node on port ${failing.port} as failing`;
    const myself = view.entries.find((entry) => entry.myself);
    if (myself?.role === 'replica' && !view.synced) return `replica on port ${port} has not finished syncing with its master`;
    const key = configurationKey(view.entries);
    if (agreed === undefined) agreed = { key, entries: view.entries };
    else if (agreed.key !== key) return `nodes on ports ${(running[0] as ProcessServer).port} and ${port} disagree on the configuration`;
  }
  const topology = topologyOf(agreed?.entries ?? []);
  const unknown = group.servers.find((server) => !topology.has(server.port));
  if (unknown !== undefined) return `no node lists the node on port ${unknown.port}`;
  return topology;
}

interface NodeView {
  readonly state: string;
  readonly entries: ClusterNodesEntry[];
  /** For a replica: link up and no sync in progress. */
  readonly synced: boolean;
}

async function readView(server: ProcessServer): Promise<NodeView | string> {
  try {
    const replies = await sendCommands(
      server.host,
      server.port,
      [
        ['CLUSTER', 'INFO'],
        ['CLUSTER', 'NODES'],
        ['INFO', 'replication'],
      ],
      QUERY_TIMEOUT_MS,
    );
    const [info, nodes, replication] = replies;
    for (const reply of replies) {
      if (reply instanceof RespErrorReply) return `node on port ${server.port} answered ${reply.message}`;
    }
    if (typeof info !== 'string' || typeof nodes !== 'string' || typeof replication !== 'string') {
      return `node on port ${server.port} gave an unexpected reply`;
    }
    return {
      state: infoField(info, 'cluster_state') ?? 'unknown',
      entries: parseClusterNodes(nodes),
      synced: infoField(replication, 'master_link_status') === 'up' && infoField(replication, 'master_sync_in_progress') === '0',
    };
  } catch (error) {
    return `node on port ${server.port} did not answer (${(error as Error).message})`;
  }
}
