import { createServer, connect, type Server, type Socket } from 'node:net';

/** How a {@link FaultProxy} treats the bytes between its clients and the server. */
export type LinkFault =
  /** Bytes pass at once. */
  | { readonly kind: 'pass' }
  /**
   * Nothing passes either way, but every socket stays open (new ones too): a
   * partition as TCP sees it. What was sent meanwhile arrives, in order, once
   * the link heals, as TCP would retransmit it.
   */
  | { readonly kind: 'blackhole' }
  /** Every chunk passes `ms` later, in order, both ways: a slow link. */
  | { readonly kind: 'delay'; readonly ms: number }
  /**
   * Commands reach the server, its replies are held until the link heals: the
   * server ran what the client sent and the client heard nothing (a reply lost
   * with a connection that then closes, see {@link FaultProxy.reset}).
   */
  | { readonly kind: 'mute' };

/** One proxied connection: the client's socket and the server's. */
interface Link {
  readonly client: Socket;
  readonly server: Socket;
  /** Bytes held back while the link is a blackhole, per direction, in order. */
  readonly held: { up: Buffer[]; down: Buffer[] };
  /** Delayed chunks each way, in order, with when each is due to pass. */
  readonly delayed: { up: { due: number; chunk: Buffer }[]; down: { due: number; chunk: Buffer }[] };
}

/**
 * A TCP proxy in front of one Redis server that cuts, slows or resets the
 * link of the clients that connect through it, while clients that connect to
 * the server directly are untouched: one client partitioned from Redis, or
 * on a slow link, beside healthy ones. Listens on 127.0.0.1, on a free port.
 */
export class FaultProxy {
  private fault: LinkFault = { kind: 'pass' };
  private readonly links = new Set<Link>();

  private constructor(
    private readonly server: Server,
    /** The port clients connect to. */
    readonly port: number,
    private readonly target: { readonly host: string; readonly port: number },
  ) {}

  /** Starts a proxy to `target` (e.g. a RedisFleet server's host and port). */
  static async start(target: { readonly host?: string; readonly port: number }): Promise<FaultProxy> {
    const upstream = { host: target.host ?? '127.0.0.1', port: target.port };
    const server = createServer();
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    });
    const proxy = new FaultProxy(server, port, upstream);
    server.on('connection', (client) => proxy.accept(client));
    return proxy;
  }

  /** `redis://127.0.0.1:<port>`: the URL to give a client that should see the faults. */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Connections open through the proxy now. */
  get connections(): number {
    return this.links.size;
  }

  /** Cuts every link, open and new, until {@link heal}. */
  blackhole(): void {
    this.fault = { kind: 'blackhole' };
  }

  /** Holds every reply back (commands still pass), open and new links, until {@link heal}. */
  mute(): void {
    this.fault = { kind: 'mute' };
  }

  /** Delays every chunk by `ms`, both ways, until {@link heal}. */
  delay(ms: number): void {
    if (!Number.isInteger(ms) || ms < 0) throw new RangeError(`delay must be an integer number of ms ≥ 0, got ${ms}`);
    this.setFault({ kind: 'delay', ms });
  }

  /** Resets every open connection (TCP RST to both sides); new ones pass. */
  reset(): void {
    for (const link of [...this.links]) {
      link.client.resetAndDestroy();
      link.server.resetAndDestroy();
      this.links.delete(link);
    }
  }

  /** Lets bytes pass again; what a blackhole held back goes out first, in order. */
  heal(): void {
    this.setFault({ kind: 'pass' });
  }

  /** Closes the proxy and every connection through it. */
  async stop(): Promise<void> {
    for (const link of this.links) {
      link.client.destroy();
      link.server.destroy();
    }
    this.links.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const server = connect(this.target.port, this.target.host);
    const link: Link = { client, server, held: { up: [], down: [] }, delayed: { up: [], down: [] } };
    this.links.add(link);
    const end = (): void => {
      if (!this.links.delete(link)) return;
      client.destroy();
      server.destroy();
    };
    for (const socket of [client, server]) {
      socket.setNoDelay(true);
      socket.on('error', end);
      socket.on('close', end);
    }
    client.on('data', (chunk: Buffer) => this.forward(link, 'up', chunk));
    server.on('data', (chunk: Buffer) => this.forward(link, 'down', chunk));
  }

  /** Switches to `fault`, sending what a blackhole held back through it first. */
  private setFault(fault: LinkFault): void {
    this.fault = fault;
    for (const link of this.links) {
      for (const direction of ['up', 'down'] as const) {
        for (const chunk of link.held[direction].splice(0)) this.forward(link, direction, chunk);
      }
    }
  }

  private forward(link: Link, direction: 'up' | 'down', chunk: Buffer): void {
    const fault = this.fault;
    if (fault.kind === 'blackhole' || (fault.kind === 'mute' && direction === 'down')) {
      link.held[direction].push(chunk);
      return;
    }
    const to = direction === 'up' ? link.server : link.client;
    const queue = link.delayed[direction];
    const ms = fault.kind === 'delay' ? fault.ms : 0;
    // Behind any chunk still delayed the same way: bytes never overtake each other.
    if (ms === 0 && queue.length === 0) {
      to.write(chunk);
      return;
    }
    queue.push({ due: performance.now() + ms, chunk });
    if (queue.length === 1) this.drainLater(link, to, queue);
  }

  /** Writes the queue's chunks as each comes due, in order. */
  private drainLater(link: Link, to: Socket, queue: { due: number; chunk: Buffer }[]): void {
    const first = queue[0];
    if (!first) return;
    setTimeout(
      () => {
        if (!this.links.has(link)) return;
        const now = performance.now();
        while (queue[0] && queue[0].due <= now + 0.5) to.write(queue.shift()!.chunk);
        this.drainLater(link, to, queue);
      },
      Math.max(0, first.due - performance.now()),
    ).unref();
  }
}
