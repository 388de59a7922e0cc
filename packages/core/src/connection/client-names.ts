import { monotonicNow } from './time.js';

/** Who a client is, for people: its `name` option, and the host and process it runs in. */
export interface ClientIdentity {
  /** The client's `name` option (default `<hostname>:<pid>`). */
  readonly name: string;
  /** The host the client runs on (`os.hostname()`). */
  readonly host: string;
  /** The process id of the client. */
  readonly pid: number;
}

/** `rlock:<clientId>:<name>:<host>:<pid>`, percent-encoded (Redis refuses spaces): CLIENT LIST traces an owner id to its client, no key grows. */
export function connectionNameOf(clientId: string, identity: ClientIdentity): string {
  return `rlock:${clientId}:${encodeURIComponent(identity.name)}:${encodeURIComponent(identity.host)}:${identity.pid}`;
}

// ioredis's Cluster names its subscriber connections `ioredis-cluster(…):<name>`.
const NAME = /(?:^|:)rlock:([0-9A-Za-z_]+):([^:]*):([^:]*):(\d+)$/;

/** The rlock clients a CLIENT LIST reply shows, by client id (unnamed connections and others' names are skipped). */
export function parseClientList(reply: string): Map<string, ClientIdentity> {
  const clients = new Map<string, ClientIdentity>();
  for (const line of reply.split('\n')) {
    // Fields are `key=value` separated by spaces; a name has no space.
    const name = / name=(\S*)/.exec(` ${line}`)?.[1];
    const match = name ? NAME.exec(name) : null;
    if (!match) continue;
    try {
      const [, clientId, encodedName, encodedHost, pid] = match as unknown as [string, string, string, string, string];
      clients.set(clientId, { name: decodeURIComponent(encodedName), host: decodeURIComponent(encodedHost), pid: Number(pid) });
    } catch {
      // A name that is not valid percent-encoding was not written by rlock.
    }
  }
  return clients;
}

/** How long a timed-out acquisition looks up the holder to name in its error, ms (at most commandTimeoutMs). */
export const HOLDER_LOOKUP_MS = 200;

/** How long one CLIENT LIST answers lookups on its server, ms: a burst of timeouts costs one call. */
const LIST_REUSE_MS = 250;
/** How long a server that refused CLIENT LIST (ACL, renamed command) is not asked again, ms. */
const REFUSED_PAUSE_MS = 60_000;

/** Finds rlock clients by id through CLIENT LIST, O(connections), so one answer serves LIST_REUSE_MS of lookups. Never rejects. */
export class ClientDirectory {
  private readonly lists = new Map<string, { readonly at: number; readonly clients: Promise<Map<string, ClientIdentity>> }>();
  private refusedUntil = 0;

  constructor(
    /** CLIENT LIST (type normal) on the server that holds `key`, bounded in time. */
    private readonly list: (key: string) => Promise<string>,
    /** Keys on one server map to one string (one Redis: a constant; a Cluster: the slot). */
    private readonly serverOf: (key: string) => string,
  ) {}

  /** The clients connected to the server of `key`, by client id; empty when that is unknown. */
  clientsAt(key: string): Promise<Map<string, ClientIdentity>> {
    const now = monotonicNow();
    if (now < this.refusedUntil) return Promise.resolve(new Map<string, ClientIdentity>());
    const server = this.serverOf(key);
    const reused = this.lists.get(server);
    if (reused && now - reused.at < LIST_REUSE_MS) return reused.clients;
    for (const [other, entry] of this.lists) if (now - entry.at >= LIST_REUSE_MS) this.lists.delete(other);
    const clients = this.list(key).then(parseClientList, (error: unknown) => {
      this.lists.delete(server);
      // An error reply saying the command is not allowed (NOPERM) or not there (renamed away); its message quotes the reply.
      const refused = error instanceof Error && /NOPERM|unknown command|unknown subcommand/i.test(error.message);
      if (refused) this.refusedUntil = monotonicNow() + REFUSED_PAUSE_MS;
      return new Map<string, ClientIdentity>();
    });
    this.lists.set(server, { at: now, clients });
    return clients;
  }
}
