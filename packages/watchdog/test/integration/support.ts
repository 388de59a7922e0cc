import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createClient, type ClientOptions, type RLockClient } from '@org/rlock';
import { eventually, uniquePrefix } from '@org/rlock-testing';

export { uniquePrefix, eventually, sleep } from '@org/rlock-testing';

/** Clients made by a test file (each with its own key prefix unless given), closed after each test. */
export class ClientPool {
  private readonly clients: RLockClient[] = [];

  make(url: string, options: Partial<ClientOptions> = {}): RLockClient {
    const client = createClient({ redis: url, keyPrefix: uniquePrefix(), ...options });
    this.clients.push(client);
    return client;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.clients.splice(0).map((client) => client.close()));
  }
}

const HOLDER = fileURLToPath(new URL('./fixtures/holder-process.mjs', import.meta.url));

/** A child process holding a watchdog lock; lines of its stdout arrive in `lines`. */
export class HolderProcess {
  readonly lines: string[] = [];
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  constructor(env: { REDIS_URL: string; PREFIX: string; WATCHDOG_MS: string }) {
    this.child = spawn(process.execPath, [HOLDER], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
    let buffer = '';
    this.child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const parts = buffer.split('\n');
      buffer = parts.pop() ?? '';
      this.lines.push(...parts);
    });
    this.exited = new Promise((resolve) => this.child.on('exit', () => resolve()));
  }

  async waitForLine(prefix: string, timeoutMs: number): Promise<string> {
    const found = await eventually(() => this.lines.some((line) => line.startsWith(prefix)), timeoutMs);
    if (!found) throw new Error(`holder printed no "${prefix}" line within ${timeoutMs} ms (got ${JSON.stringify(this.lines)})`);
    return this.lines.find((line) => line.startsWith(prefix))!;
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  async stop(): Promise<void> {
    this.child.kill('SIGCONT');
    this.child.kill('SIGKILL');
    await this.exited;
  }
}
