import type { RedisAppendFsync } from './fleet-options.js';

/** What decides a server's command line. */
export interface ServerArgsInput {
  readonly port: number;
  /** Data directory: AOF and RDB files live here, so a restart finds them. */
  readonly dir: string;
  /** Absolute log file path, or undefined to log to stdout (containers). */
  readonly logfile: string | undefined;
  /** Address to listen on. */
  readonly bind: string;
  readonly appendonly: boolean;
  readonly appendfsync: RedisAppendFsync;
  /** Whether the server knows `--enable-debug-command` (Redis ≥ 7.0). */
  readonly debugCommandFlag: boolean;
  readonly extraArgs: readonly string[];
  /**
   * A config file to load before the command-line options (which win over
   * it): redis-server takes it as its first argument. A sentinel needs one
   * (it saves its state there); a data node started from one lets
   * `CONFIG REWRITE` persist what changed at runtime (e.g. a Sentinel's
   * `REPLICAOF`), so a restart keeps it.
   */
  readonly configFile?: string;
  /** Run as a Sentinel (`--sentinel`); `configFile` is then required. */
  readonly sentinel?: boolean;
}

/**
 * The `redis-server` arguments of one fleet server.
 *
 * - `--save ''` without appendonly: no RDB snapshot, so a restarted server
 *   starts empty and tests see exactly the data loss of a crash.
 * - `--protected-mode no`: a container is reached through Docker's port
 *   forwarding, not from loopback, and has no password.
 * - `--enable-debug-command yes`: Redis 7 refuses `DEBUG` (used by
 *   `debugSleep`) without it; older servers allow it and reject the flag.
 */
export function buildServerArgs(input: ServerArgsInput): string[] {
  const args = [
    ...(input.configFile === undefined ? [] : [input.configFile]),
    '--port',
    String(input.port),
    '--bind',
    input.bind,
    '--protected-mode',
    'no',
    '--daemonize',
    'no',
    '--dir',
    input.dir,
    '--appendonly',
    input.appendonly ? 'yes' : 'no',
    '--appendfsync',
    input.appendfsync,
  ];
  if (!input.appendonly) args.push('--save', '');
  if (input.logfile !== undefined) args.push('--logfile', input.logfile);
  if (input.debugCommandFlag) args.push('--enable-debug-command', 'yes');
  if (input.sentinel === true) args.push('--sentinel');
  args.push(...input.extraArgs);
  return args;
}
