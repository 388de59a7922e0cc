import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { registerExitCleanup, unregisterExitCleanup, type ExitCleanup } from './exit-cleanup.js';
import type { RedisAppendFsync } from './fleet-options.js';
import type { FleetServer, KillSignal } from './fleet-server.js';
import { CLUSTER_BUS_PORT_OFFSET, findFreePort } from './port-finder.js';
import type { RedisServerBinary } from './redis-server-binary.js';
import { buildServerArgs } from './server-args.js';
import { probeServer } from './server-probe.js';
import { SUPERVISOR_NAME, SUPERVISOR_SCRIPT } from './supervisor-script.js';

/** Settings shared by every server of a process-backed fleet. */
export interface ProcessServerConfig {
  readonly binary: RedisServerBinary;
  readonly appendonly: boolean;
  readonly appendfsync: RedisAppendFsync;
  readonly extraArgs: readonly string[];
  /**
   * Contents of a config file for this server, given its data directory:
   * written to `<dir>/redis.conf` before the first launch (restarts keep what
   * Redis rewrote there) and passed as redis-server's first argument, so the
   * command-line options still win over it.
   */
  readonly configFile?: (dir: string) => string;
  /** Run as a Sentinel (`--sentinel`); needs `configFile`. */
  readonly sentinel?: boolean;
  /** A cluster node: its port + 10000 (the cluster bus) must be free too. */
  readonly clusterBus?: boolean;
}

/** Name of the config file written from {@link ProcessServerConfig.configFile}. */
export const CONFIG_FILE_NAME = 'redis.conf';

const HOST = '127.0.0.1';
/** Bound on a start or restart until PING answers. */
const READY_TIMEOUT_MS = 10_000;
/** Bound on waiting for a signalled server to exit (SIGTERM waits for a DEBUG SLEEP to end). */
const EXIT_TIMEOUT_MS = 30_000;
/** Bound on waiting for SIGSTOP/SIGCONT to show in /proc. */
const STATE_TIMEOUT_MS = 5_000;
/** Fresh ports tried when another process takes ours between probe and bind. */
const PORT_ATTEMPTS = 10;
const STDERR_KEPT_CHARS = 8_192;
const LOG_TAIL_BYTES = 4_096;

/** redis-server could not bind its port: try another (start) or again (restart). */
class PortInUseError extends Error {
  override readonly name = 'PortInUseError';
}

/** One run of the supervisor shell and the redis-server under it. */
interface Supervised {
  readonly child: ChildProcess;
  /** Our end of fd 3: the supervisor kills the server when it closes. */
  readonly lifeline: Socket;
  /** Resolves with the server's pid, printed by the supervisor. */
  readonly pid: Promise<number>;
  redisPid: number | undefined;
  /** Resolves when the supervisor (and so the server) has exited. */
  readonly exited: Promise<void>;
  hasExited: boolean;
  exitStatus: string;
  ready: boolean;
  paused: boolean;
  stderr: string;
}

/**
 * A local redis-server under the {@link SUPERVISOR_SCRIPT} supervisor, bound
 * to 127.0.0.1 on a port the OS said was free, with its own temporary data
 * directory. POSIX only (the supervisor is `sh`).
 */
export class ProcessServer implements FleetServer, ExitCleanup {
  readonly host = HOST;
  private run: Supervised | undefined;
  private destroyed = false;

  private constructor(
    readonly port: number,
    /** Data directory, also holding `redis.log`; removed by destroy(). */
    readonly dir: string,
    private readonly config: ProcessServerConfig,
  ) {}

  /**
   * Starts a server on a free port and resolves once PING answers.
   * @throws Error with the tail of the server's log when it does not come up.
   */
  static async start(config: ProcessServerConfig): Promise<ProcessServer> {
    if (process.platform === 'win32') {
      throw new Error("RedisFleet backend 'process' needs a POSIX sh; use backend 'container' on Windows");
    }
    const dir = await mkdtemp(join(tmpdir(), 'rlock-fleet-'));
    const portOptions = { host: HOST, companionOffset: config.clusterBus === true ? CLUSTER_BUS_PORT_OFFSET : undefined };
    if (config.configFile !== undefined) {
      try {
        await writeFile(join(dir, CONFIG_FILE_NAME), config.configFile(dir));
      } catch (error) {
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
    }
    let lastError: unknown;
    for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt += 1) {
      let server: ProcessServer | undefined;
      try {
        server = new ProcessServer(await findFreePort(portOptions), dir, config);
        await server.launch();
        return server;
      } catch (error) {
        lastError = error;
        if (error instanceof PortInUseError) {
          // That run has exited; the next attempt reuses the directory.
          if (server !== undefined) unregisterExitCleanup(server);
          continue;
        }
        await server?.destroy().catch(() => undefined);
        break;
      }
    }
    await rm(dir, { recursive: true, force: true });
    throw lastError instanceof PortInUseError ? new Error(`redis-server found no free port in ${PORT_ATTEMPTS} attempts`, { cause: lastError }) : lastError;
  }

  isRunning(): boolean {
    const run = this.run;
    return run !== undefined && run.ready && !run.hasExited;
  }

  /** Running but stopped by {@link ProcessServer.pause}: it answers nothing until resumed. */
  isPaused(): boolean {
    return this.isRunning() && this.run?.paused === true;
  }

  async kill(signal: KillSignal): Promise<void> {
    const run = this.run;
    if (run === undefined || run.hasExited) return;
    const pid = await withTimeout(run.pid, READY_TIMEOUT_MS, () => 'the supervisor printed no pid');
    signalPid(pid, signal);
    // A stopped process acts on SIGTERM only once continued (SIGKILL needs no help).
    if (signal === 'SIGTERM' && run.paused) signalPid(pid, 'SIGCONT');
    await withTimeout(run.exited, EXIT_TIMEOUT_MS, () => `redis-server on port ${this.port} did not exit after ${signal}`);
  }

  async restart(): Promise<void> {
    if (this.destroyed) throw new Error(`redis-server on port ${this.port} was destroyed`);
    if (this.run !== undefined && !this.run.hasExited) await this.kill('SIGKILL');
    // Same port and data directory. The port may be briefly taken by another
    // process (an outgoing connection's ephemeral port): retry until the deadline.
    const deadline = performance.now() + READY_TIMEOUT_MS;
    for (;;) {
      try {
        await this.launch();
        return;
      } catch (error) {
        if (!(error instanceof PortInUseError) || performance.now() >= deadline) throw error;
        await delay(100);
      }
    }
  }

  async pause(): Promise<void> {
    const run = this.requireRunning('pause');
    const pid = await run.pid;
    signalPid(pid, 'SIGSTOP');
    run.paused = true;
    // SIGSTOP is asynchronous: wait until the kernel shows the process stopped.
    await waitForProcState(pid, (state) => state === 'T', 'stopped');
  }

  async resume(): Promise<void> {
    const run = this.run;
    if (run === undefined || run.hasExited || !run.paused) return;
    const pid = await run.pid;
    signalPid(pid, 'SIGCONT');
    run.paused = false;
    await waitForProcState(pid, (state) => state !== 'T', 'continued');
  }

  async destroy(): Promise<void> {
    this.destroyed = true;
    const run = this.run;
    try {
      if (run !== undefined && !run.hasExited) {
        if (run.redisPid !== undefined) signalPid(run.redisPid, 'SIGKILL');
        // Before the pid is known, closing the lifeline makes the supervisor kill the server.
        else run.lifeline.destroy();
        await withTimeout(run.exited, EXIT_TIMEOUT_MS, () => `redis-server on port ${this.port} did not exit after SIGKILL`);
      }
    } finally {
      unregisterExitCleanup(this);
      await rm(this.dir, { recursive: true, force: true, maxRetries: 3 });
    }
  }

  /** Synchronous teardown from process 'exit'. */
  onProcessExit(): void {
    const run = this.run;
    if (run !== undefined && !run.hasExited && run.redisPid !== undefined) signalPid(run.redisPid, 'SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }

  private requireRunning(operation: string): Supervised {
    const run = this.run;
    if (run === undefined || !run.ready || run.hasExited) {
      throw new Error(`cannot ${operation} redis-server on port ${this.port}: it is not running`);
    }
    return run;
  }

  /** Spawns the supervisor on this.port and waits until our server answers PING. */
  private async launch(): Promise<void> {
    if (this.destroyed) throw new Error(`redis-server on port ${this.port} was destroyed`);
    const { binary } = this.config;
    const args = buildServerArgs({
      port: this.port,
      dir: this.dir,
      logfile: join(this.dir, 'redis.log'),
      bind: HOST,
      appendonly: this.config.appendonly,
      appendfsync: this.config.appendfsync,
      debugCommandFlag: binary.major >= 7,
      extraArgs: this.config.extraArgs,
      configFile: this.config.configFile === undefined ? undefined : join(this.dir, CONFIG_FILE_NAME),
      sentinel: this.config.sentinel,
    });
    const run = spawnSupervised(this.dir, binary.path, args);
    this.run = run;
    registerExitCleanup(this);
    let pid: number;
    try {
      pid = await withTimeout(run.pid, READY_TIMEOUT_MS, () => 'the supervisor printed no pid');
    } catch (error) {
      throw await this.startFailure(run, `redis-server on port ${this.port} did not start`, error);
    }
    const deadline = performance.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (this.destroyed) throw new Error(`redis-server on port ${this.port} was destroyed while starting`);
      if (run.hasExited) {
        throw await this.startFailure(run, `redis-server on port ${this.port} exited (${run.exitStatus}) before answering PING`);
      }
      // 'foreign': someone else listens on the port; ours will fail to bind and exit.
      if ((await probeServer(HOST, this.port, pid)) === 'ready') {
        run.ready = true;
        return;
      }
      if (performance.now() >= deadline) {
        signalPid(pid, 'SIGKILL');
        await withTimeout(run.exited, EXIT_TIMEOUT_MS, () => 'redis-server did not exit').catch(() => undefined);
        throw await this.startFailure(run, `redis-server on port ${this.port} did not answer PING within ${READY_TIMEOUT_MS} ms`);
      }
      await delay(20);
    }
  }

  private async startFailure(run: Supervised, message: string, cause?: unknown): Promise<Error> {
    const log = await readTail(join(this.dir, 'redis.log'), LOG_TAIL_BYTES);
    const output = `${log}\n${run.stderr}`;
    if (/Address already in use/i.test(output)) {
      return new PortInUseError(`port ${this.port} is in use`);
    }
    const tail = [log.trim() && `log tail:\n${log.trim()}`, run.stderr.trim() && `stderr:\n${run.stderr.trim()}`].filter(Boolean).join('\n');
    return new Error(`${message}${tail ? `\n${tail}` : ''}`, cause === undefined ? undefined : { cause });
  }
}

/**
 * Spawns the supervisor. Every handle is unref'd: a fleet never keeps the
 * process alive by itself (waits that need the loop hold their own timers),
 * and a process that exits without stop() still tears the servers down
 * through process 'exit' and the lifeline.
 */
function spawnSupervised(dir: string, redisServerPath: string, args: readonly string[]): Supervised {
  const child = spawn('sh', ['-c', SUPERVISOR_SCRIPT, SUPERVISOR_NAME, dir, redisServerPath, ...args], {
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    windowsHide: true,
  });
  const lifeline = child.stdio[3] as Socket;
  let resolvePid!: (pid: number) => void;
  let rejectPid!: (error: Error) => void;
  let resolveExited!: () => void;
  const run: Supervised = {
    child,
    lifeline,
    pid: new Promise<number>((resolve, reject) => {
      resolvePid = resolve;
      rejectPid = reject;
    }),
    redisPid: undefined,
    exited: new Promise<void>((resolve) => {
      resolveExited = resolve;
    }),
    hasExited: false,
    exitStatus: '',
    ready: false,
    paused: false,
    stderr: '',
  };
  // Callers may never await pid (e.g. destroy during start): no unhandled rejection.
  run.pid.catch(() => undefined);

  let stdout = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    if (run.redisPid !== undefined) return;
    stdout += chunk;
    const newline = stdout.indexOf('\n');
    if (newline < 0) return;
    const pid = Number(stdout.slice(0, newline).trim());
    if (Number.isInteger(pid) && pid > 0) {
      run.redisPid = pid;
      resolvePid(pid);
    } else {
      rejectPid(new Error(`supervisor printed no pid: ${JSON.stringify(stdout.slice(0, 200))}`));
    }
  });
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    run.stderr = (run.stderr + chunk).slice(-STDERR_KEPT_CHARS);
  });
  // EPIPE and the like on our pipe ends must not become uncaught errors.
  lifeline.on('error', () => undefined);
  child.on('error', (error) => {
    rejectPid(new Error(`could not spawn sh for redis-server: ${error.message}`, { cause: error }));
  });
  child.on('exit', (code, signal) => {
    run.hasExited = true;
    run.ready = false;
    run.paused = false;
    run.exitStatus = signal !== null ? `signal ${signal}` : exitStatusText(code);
    rejectPid(new Error(`supervisor exited (${run.exitStatus}) before printing the pid`));
    lifeline.destroy();
    resolveExited();
  });

  child.unref();
  (child.stdout as unknown as Socket | null)?.unref();
  (child.stderr as unknown as Socket | null)?.unref();
  lifeline.unref();
  return run;
}

/** The supervisor exits with the server's status; dash reports death by signal N as 128+N. */
function exitStatusText(code: number | null): string {
  if (code === null) return 'unknown status';
  if (code > 128 && code < 160) return `signal ${code - 128}`;
  return `code ${code}`;
}

function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (error) {
    // ESRCH: already gone, which is what a kill wants anyway.
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * Bounds a wait. The timer also keeps the event loop alive while the fleet's
 * own (unref'd) handles are all that is pending.
 */
async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(message())), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Polls the process state letter in /proc/<pid>/stat ('T' = stopped) until
 * `accept` holds. Without /proc (macOS) it trusts the signal.
 */
async function waitForProcState(pid: number, accept: (state: string) => boolean, what: string): Promise<void> {
  const deadline = performance.now() + STATE_TIMEOUT_MS;
  for (;;) {
    let stat: string;
    try {
      stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return;
    }
    // "<pid> (<comm>) <state> …": comm may contain spaces and parentheses.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (accept(state)) return;
    if (performance.now() >= deadline) {
      throw new Error(`redis-server pid ${pid} was not ${what} within ${STATE_TIMEOUT_MS} ms (state ${state})`);
    }
    await delay(5);
  }
}

async function readTail(path: string, bytes: number): Promise<string> {
  try {
    const file = await open(path, 'r');
    try {
      const { size } = await file.stat();
      const length = Math.min(size, bytes);
      const buffer = Buffer.alloc(length);
      await file.read(buffer, 0, length, size - length);
      return buffer.toString('utf8');
    } finally {
      await file.close();
    }
  } catch {
    return '';
  }
}
