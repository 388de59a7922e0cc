import type { KillSignal } from './fleet-server.js';
import type { ServerGroup } from './server-group.js';

/** A node as a fleet hands it out: its position in start order and its port, which must match. */
export interface FleetNodeRef {
  readonly index: number;
  readonly port: number;
}

/** Per-call bound of a fleet's waits (failover, restart, stability). */
export interface FleetWaitOptions {
  /** @default the fleet's `waitTimeoutMs` (30000 unless set at start) */
  timeoutMs?: number;
}

/**
 * What a fleet of local redis-server processes with failover (a Cluster, a Sentinel group) does the same
 * way whatever its topology: nodes by index or as handed out, faults on one node, one teardown. Each fleet
 * adds what its topology means (roles, slots, waiting for a failover) on top.
 */
export abstract class FailoverFleet<Node extends FleetNodeRef> implements AsyncDisposable {
  protected constructor(
    protected readonly group: ServerGroup,
    /** What the fleet is called in messages (`cluster`, `group`). */
    private readonly noun: string,
    /** The bound of a wait that sets none. */
    private readonly waitTimeoutMs: number,
  ) {}

  /**
   * Node `i` (start order).
   * @throws RangeError for an index outside 0 … size − 1.
   */
  abstract node(i: number): Node;

  /** Every node in index order (see {@link FailoverFleet.node}). */
  nodes(): Node[] {
    return this.group.servers.map((_, i) => this.node(i));
  }

  /**
   * Kills a node (any role) with `signal` and resolves once it has exited; at once when it is not running.
   * Roles are not re-read (see the fleet's `refresh` and `waitForFailover`).
   * @throws RangeError for a bad index or signal; Error once stopped.
   */
  async kill(node: number | Node, signal: KillSignal = 'SIGKILL'): Promise<void> {
    await this.group.kill(this.indexOf(node), signal);
  }

  /**
   * Freezes a node (SIGSTOP) until {@link FailoverFleet.resume}. A master paused longer than the fleet's
   * failure detection (a cluster's `nodeTimeoutMs`, a Sentinel group's `downAfterMs`) is failed over like a dead one.
   * @throws Error when the node is not running or the fleet is stopped.
   */
  async pause(node: number | Node): Promise<void> {
    await this.group.pause(this.indexOf(node));
  }

  /** Continues a paused node (SIGCONT); no-op when it is not paused. */
  async resume(node: number | Node): Promise<void> {
    await this.group.resume(this.indexOf(node));
  }

  /** Whether the node's process runs (a paused node runs). */
  isRunning(node: number | Node): boolean {
    return this.group.server(this.indexOf(node)).isRunning();
  }

  /**
   * Disconnects the clients made by the fleet's `client()`, kills every node (SIGKILL) and removes their data
   * directories. Idempotent.
   * @throws AggregateError when some node could not be torn down.
   */
  stop(): Promise<void> {
    return this.group.stop();
  }

  /** Same as {@link FailoverFleet.stop}, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  /** The index of `node`, checked: in range, and (for a node handed out) still on the port it had. */
  protected indexOf(node: number | Node): number {
    if (typeof node === 'number') {
      this.group.server(node);
      return node;
    }
    const server = this.group.servers[node.index];
    if (server === undefined || server.port !== node.port) {
      throw new RangeError(`node on port ${node.port} is not part of this ${this.noun}`);
    }
    return node.index;
  }

  /** The call's `timeoutMs`, else the fleet's `waitTimeoutMs`. @throws RangeError for a bad one. */
  protected timeout(options: FleetWaitOptions): number {
    const timeoutMs = options.timeoutMs ?? this.waitTimeoutMs;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 0) throw new RangeError(`timeoutMs must be an integer ≥ 0, got ${String(timeoutMs)}`);
    return timeoutMs;
  }
}
