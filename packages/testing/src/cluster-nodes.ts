/** A node's role as the cluster sees it. */
export type ClusterRole = 'master' | 'replica';

/** One line of `CLUSTER NODES`: what the answering node knows about one node. */
export interface ClusterNodesEntry {
  /** Node id, 40 hex characters. */
  readonly id: string;
  readonly host: string;
  readonly port: number;
  /** `master` or `replica`; `undefined` while the node is still in a handshake. */
  readonly role: ClusterRole | undefined;
  /** The replica's master id; `undefined` for a master. */
  readonly masterId: string | undefined;
  /** This line describes the node that answered (`myself` flag). */
  readonly myself: boolean;
  /** `fail` (agreed by a majority of masters) or `fail?` (this node's suspicion). */
  readonly failing: boolean;
  /** Not yet a full member: `handshake` or `noaddr`. */
  readonly joining: boolean;
  /** Slot ranges served, inclusive, in the order listed; importing/migrating entries are left out. */
  readonly slots: readonly (readonly [number, number])[];
}

/**
 * Parses a `CLUSTER NODES` reply
 * (https://redis.io/docs/latest/commands/cluster-nodes/):
 * `<id> <ip:port@cport[,hostname]> <flags> <master> <ping-sent> <pong-recv> <config-epoch> <link-state> <slot> <slot> …`.
 * @throws Error on a line that does not have that shape.
 */
export function parseClusterNodes(text: string): ClusterNodesEntry[] {
  const entries: ClusterNodesEntry[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const fields = line.trim().split(' ');
    const [id, address, flagList, master] = fields;
    const endpoint = address === undefined ? null : /^(.*):(\d+)@\d+/.exec(address);
    if (id === undefined || endpoint === null || flagList === undefined || master === undefined || fields.length < 8) {
      throw new Error(`unexpected CLUSTER NODES line: ${JSON.stringify(line)}`);
    }
    const flags = new Set(flagList.split(','));
    const slots: [number, number][] = [];
    for (const slot of fields.slice(8)) {
      if (slot.startsWith('[')) continue; // [slot->-id] / [slot-<-id]: a migration in progress
      const [first, last = first] = slot.split('-').map(Number);
      if (first !== undefined && last !== undefined) slots.push([first, last]);
    }
    entries.push({
      id,
      host: endpoint[1] ?? '',
      port: Number(endpoint[2]),
      role: flags.has('master') ? 'master' : flags.has('slave') ? 'replica' : undefined,
      masterId: master === '-' ? undefined : master,
      myself: flags.has('myself'),
      failing: flags.has('fail') || flags.has('fail?'),
      joining: flags.has('handshake') || flags.has('noaddr'),
      slots,
    });
  }
  return entries;
}

/** Whether `slot` lies in one of `ranges`. */
export function slotInRanges(slot: number, ranges: readonly (readonly [number, number])[]): boolean {
  return ranges.some(([first, last]) => slot >= first && slot <= last);
}
