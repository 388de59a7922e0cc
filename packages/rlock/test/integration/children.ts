import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** A fixture under ./fixtures (it imports the built dist: build before running the tests). */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
}

/** A child process: its output as it comes, its JSON lines, and its exit. */
export class Child {
  readonly process: ChildProcess;
  stdout = '';
  stderr = '';
  /** Resolves with the exit code and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly waiting: { test: (line: string) => boolean; resolve: (line: string) => void; reject: (error: Error) => void }[] = [];

  /** Starts `node <script> …args` with `env` on top of this process's; SIGKILLed after `limitMs` whatever happens. */
  constructor(script: string, env: Record<string, string>, args: readonly string[] = [], limitMs = 60_000) {
    this.process = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    const timer = setTimeout(() => this.process.kill('SIGKILL'), limitMs);
    this.exited = new Promise((resolve) => {
      this.process.on('exit', (code, signal) => {
        clearTimeout(timer);
        for (const entry of this.waiting.splice(0)) entry.reject(new Error(`child exited (${code ?? signal}) first: ${this.stderr}`));
        resolve({ code, signal });
      });
    });
    this.process.stdout?.on('data', (chunk: Buffer) => {
      this.stdout += chunk.toString();
      this.check();
    });
    this.process.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
  }

  /** The complete lines printed so far (a line still being written is left out). */
  get lines(): string[] {
    return this.stdout
      .split('\n')
      .slice(0, -1)
      .filter((line) => line.length > 0);
  }

  /** The JSON lines printed so far. */
  get events(): Record<string, unknown>[] {
    return this.lines.flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  }

  /** Resolves with the first line printed (so far or later) that passes `test`. */
  line(test: RegExp | ((line: string) => boolean)): Promise<string> {
    const check = typeof test === 'function' ? test : (line: string) => test.test(line);
    const found = this.lines.find(check);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => this.waiting.push({ test: check, resolve, reject }));
  }

  /** Resolves with the first JSON line whose fields include `fields`. */
  async event(fields: Record<string, unknown>): Promise<Record<string, unknown>> {
    const matches = (line: string): boolean => {
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        return Object.entries(fields).every(([key, value]) => parsed[key] === value);
      } catch {
        return false;
      }
    };
    return JSON.parse(await this.line(matches)) as Record<string, unknown>;
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill(signal);
  }

  private check(): void {
    const lines = this.lines;
    for (const entry of [...this.waiting]) {
      const found = lines.find(entry.test);
      if (found !== undefined) {
        this.waiting.splice(this.waiting.indexOf(entry), 1);
        entry.resolve(found);
      }
    }
  }
}
