import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** A fixture under ./fixtures (it imports the built dist: build before running the tests). */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
}

/** A running child process of a fixture, its output as it comes, and its exit. */
export interface Child {
  readonly process: ChildProcess;
  stdout: string;
  stderr: string;
  /** Resolves with the first stdout line matching `pattern` (rejects if the child exits first). */
  line(pattern: RegExp): Promise<string>;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
}

/** Starts `script` with `env` on top of this process's; SIGKILLed after `limitMs` whatever happens. */
export function startChild(script: string, env: Record<string, string>, limitMs = 90_000): Child {
  const proc = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const waiting: { pattern: RegExp; resolve: (line: string) => void; reject: (error: Error) => void }[] = [];
  const child: Child = {
    process: proc,
    stdout: '',
    stderr: '',
    line(pattern) {
      const found = child.stdout.split('\n').find((line) => pattern.test(line));
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => waiting.push({ pattern, resolve, reject }));
    },
    exited: new Promise((resolve) => {
      const timer = setTimeout(() => proc.kill('SIGKILL'), limitMs);
      proc.on('exit', (code) => {
        clearTimeout(timer);
        for (const entry of waiting.splice(0)) entry.reject(new Error(`child exited (${code}) before printing ${entry.pattern}: ${child.stderr}`));
        resolve(code);
      });
    }),
  };
  proc.stdout?.on('data', (chunk: Buffer) => {
    child.stdout += chunk.toString();
    for (const entry of [...waiting]) {
      const found = child.stdout.split('\n').find((line) => entry.pattern.test(line));
      if (found !== undefined) {
        waiting.splice(waiting.indexOf(entry), 1);
        entry.resolve(found);
      }
    }
  });
  proc.stderr?.on('data', (chunk: Buffer) => (child.stderr += chunk.toString()));
  return child;
}

/** Runs `script` to its end; rejects unless it exits 0. */
export async function runChild(script: string, env: Record<string, string>, limitMs = 90_000): Promise<string> {
  const child = startChild(script, env, limitMs);
  const code = await child.exited;
  if (code !== 0) throw new Error(`${script} exited with ${code}: ${child.stderr}`);
  return child.stdout;
}
