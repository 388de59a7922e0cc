import { connect, type Socket } from 'node:net';

/** An error reply (`-ERR …`) from Redis, returned as a value, not thrown. */
export class RespErrorReply extends Error {
  override readonly name = 'RespErrorReply';
}

/** A decoded RESP2 reply. Bulk strings are decoded as UTF-8. */
export type RespReply = string | number | null | RespErrorReply | RespReply[];

interface Pending {
  resolve(reply: RespReply): void;
  reject(error: Error): void;
}

/**
 * A bare RESP2 connection for the fleet's own probes and admin commands
 * (PING, INFO, CLIENT PAUSE, DEBUG SLEEP). Unlike ioredis it never
 * reconnects, queues offline or retries: a probe of a dead or paused server
 * must fail, not wait for it to come back. Commands are pipelined and
 * answered in order.
 */
export class RespConnection {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly pending: Pending[] = [];
  private failure: Error | undefined;

  private constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('connection closed')));
  }

  /**
   * Connects to `host:port`.
   * @throws Error when the connection is refused or not established within `timeoutMs`.
   */
  static connect(host: string, port: number, timeoutMs: number): Promise<RespConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`connecting to ${host}:${port} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      socket.once('error', (error) => {
        clearTimeout(timer);
        socket.destroy();
        reject(error);
      });
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        resolve(new RespConnection(socket));
      });
    });
  }

  /**
   * Sends one command and resolves with its reply (an error reply resolves as
   * a {@link RespErrorReply}). If no reply comes within `timeoutMs` the
   * connection is destroyed: replies are matched by order, so a late one
   * could otherwise answer the next command.
   */
  call(args: readonly (string | number)[], timeoutMs: number): Promise<RespReply> {
    return new Promise((resolve, reject) => {
      if (this.failure) {
        reject(this.failure);
        return;
      }
      const timer = setTimeout(() => {
        this.destroy(new Error(`${String(args[0])} got no reply within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.push({
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.socket.write(encodeCommand(args));
    });
  }

  /**
   * Sends one command and resolves once it was handed to the kernel, without
   * waiting for the reply; `onReply` is called with the reply when it comes.
   * No timer runs for that reply.
   */
  send(args: readonly (string | number)[], onReply: (reply: RespReply) => void = () => undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.failure) {
        reject(this.failure);
        return;
      }
      this.pending.push({ resolve: onReply, reject: () => undefined });
      this.socket.write(encodeCommand(args), (error) => (error ? reject(error) : resolve()));
    });
  }

  /** Resolves when the connection has closed, for whatever reason. */
  closed(): Promise<void> {
    if (this.socket.destroyed) return Promise.resolve();
    return new Promise((resolve) => this.socket.once('close', () => resolve()));
  }

  /** Lets the process exit while this connection is open. */
  unref(): void {
    this.socket.unref();
  }

  /** Closes at once; pending commands reject with `reason`. */
  destroy(reason: Error = new Error('connection destroyed')): void {
    this.fail(reason);
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    let offset = 0;
    for (;;) {
      if (this.failure !== undefined) return;
      let parsed: ReturnType<typeof parseReply>;
      try {
        parsed = parseReply(this.buffer, offset);
      } catch (error) {
        // Never throw inside an event handler: fail the pending commands instead.
        this.destroy(error as Error);
        return;
      }
      if (parsed === undefined) break;
      offset = parsed.next;
      const waiter = this.pending.shift();
      if (waiter === undefined) {
        this.destroy(new Error('reply without a command'));
        return;
      }
      waiter.resolve(parsed.value);
    }
    this.buffer = this.buffer.subarray(offset);
  }

  private fail(error: Error): void {
    if (this.failure === undefined) this.failure = error;
    for (const waiter of this.pending.splice(0)) waiter.reject(this.failure);
  }
}

/**
 * Connects, sends `commands` pipelined, closes, and returns their replies.
 * @throws Error when the server refuses the connection or does not answer in time.
 */
export async function sendCommands(host: string, port: number, commands: readonly (readonly (string | number)[])[], timeoutMs: number): Promise<RespReply[]> {
  const connection = await RespConnection.connect(host, port, timeoutMs);
  try {
    return await Promise.all(commands.map((command) => connection.call(command, timeoutMs)));
  } finally {
    connection.destroy();
  }
}

/** Encodes a command as a RESP array of bulk strings. */
export function encodeCommand(args: readonly (string | number)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.from(String(arg));
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/** Parses one RESP2 reply at `offset`; `undefined` when the buffer holds only part of it. */
export function parseReply(buffer: Buffer, offset: number): { value: RespReply; next: number } | undefined {
  const lineEnd = buffer.indexOf('\r\n', offset);
  if (lineEnd < 0) return undefined;
  const type = String.fromCharCode(buffer[offset] ?? 0);
  const line = buffer.toString('utf8', offset + 1, lineEnd);
  const afterLine = lineEnd + 2;
  switch (type) {
    case '+':
      return { value: line, next: afterLine };
    case '-':
      return { value: new RespErrorReply(line), next: afterLine };
    case ':':
      return { value: Number(line), next: afterLine };
    case '$': {
      const length = Number(line);
      if (length < 0) return { value: null, next: afterLine };
      if (buffer.length < afterLine + length + 2) return undefined;
      return { value: buffer.toString('utf8', afterLine, afterLine + length), next: afterLine + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, next: afterLine };
      const items: RespReply[] = [];
      let next = afterLine;
      for (let i = 0; i < count; i += 1) {
        const item = parseReply(buffer, next);
        if (item === undefined) return undefined;
        items.push(item.value);
        next = item.next;
      }
      return { value: items, next };
    }
    default:
      throw new Error(`unexpected RESP type byte ${JSON.stringify(type)}`);
  }
}
