import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { Command, CommanderError, InvalidArgumentError as CommanderArgumentError, Option } from 'commander';
import { IllegalMonitorStateError, InvalidArgumentError, OBJECT_KINDS, RedisUnavailableError, type ObjectInfo, type ObjectKind } from '@org/rlock-core';
import { KINDS, redactUrls } from '@org/rlock-core/internal';
import { connect, DEFAULT_REDIS_URL, REDIS_URL_VARIABLE, type CliConnection, type ConnectionFlags } from './connection.js';
import { EXIT, UsageError } from './exit-codes.js';
import { describeObject, escapeLines, escapeText, LIST_HEADER, listRow, safeJson, table } from './format.js';

/** Where the CLI reads and writes: the process's streams, or a test's. */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream;
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

/** The flags every command takes (global), as commander parsed them. */
interface GlobalFlags extends ConnectionFlags {
  readonly json?: boolean;
}

const EXIT_CODES_HELP = `
Exit codes:
  0  done (found, listed, released)
  1  nothing found (show, ls) or nothing released (unlock: free, not a lock, or declined;
     release: no such permit, not a permit-expirable semaphore, or declined)
  2  bad usage (unknown command or option, missing argument, bad value)
  3  Redis unreachable (refused, timed out, no master)
  4  any other failure (Redis refused a command)

Kinds (--kind, and the KIND column of ls):
${table(KINDS.map((kind) => ['', kind.name, `${kind.description} (${kind.method})`]))}

Environment: ${REDIS_URL_VARIABLE} (default ${DEFAULT_REDIS_URL}; a URL with a password belongs here or in
--redis-file, not in --redis, which ps shows), RLOCK_PREFIX (default rlock).
Text read from Redis (names, owners, client names) is printed with control and bidi characters
escaped (\\x1b, \\u202e); JSON output escapes them as \\uNNNN.`;

/**
 * Runs the `rlock` CLI on `argv` (the arguments after the program name) and
 * resolves with the exit code; never rejects.
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode: number = EXIT.ok;
  let connection: CliConnection | undefined;
  // Names, owners and client names come from Redis, where anyone with write access may put an escape sequence: every line is escaped.
  const out = (text: string): void => void io.stdout.write(`${escapeLines(text)}\n`);
  const err = (text: string): void => void io.stderr.write(`rlock: ${escapeText(redactUrls(text))}\n`);
  const open = (command: Command): { flags: GlobalFlags; connection: CliConnection } => {
    const flags = command.optsWithGlobals<GlobalFlags>();
    connection = connect(flags, err);
    return { flags, connection };
  };
  const kindOption = (): Option => new Option('--kind <kind>', 'read the object as this kind (a bare integer is a semaphore or a latch)').choices(OBJECT_KINDS);
  /** Whether the user agreed to `question` on the terminal; --yes agrees, and without a terminal --yes is required. */
  const confirmed = async (command: string, yes: boolean | undefined, question: string): Promise<boolean> => {
    if (yes) return true;
    if (!io.stdin.isTTY) throw new UsageError(`${command} asks for confirmation: pass --yes when stdin is not a terminal`);
    const prompt = createInterface({ input: io.stdin, output: io.stderr });
    const answer = await prompt.question(`${escapeText(question)} [y/N] `);
    prompt.close();
    return /^y(es)?$/i.test(answer.trim());
  };

  const program = new Command('rlock')
    .description("Inspect and administer rlock's objects in Redis: locks, fair and read-write locks, semaphores, latches, leader elections.")
    .version(packageVersion(), '-V, --version')
    .option(
      '--redis <url>',
      `one Redis: redis://host:port or host:port (default: $${REDIS_URL_VARIABLE}, else ${DEFAULT_REDIS_URL}); ps shows it: no password here`,
    )
    .option('--redis-file <path>', 'one Redis: read its URL (or host:port) from this file, so a password stays out of ps')
    .option('--tls-ca <path>', 'connect with TLS, trusting the CA certificate(s) in this PEM file (rediss:// URLs use the system CAs without it)')
    .option('--cluster <urls>', 'a Redis Cluster: startup nodes, comma-separated (redis://host:port or host:port)')
    .option('--sentinels <hosts>', 'a Sentinel group: sentinels, comma-separated (host:port or redis://host:port; with --name)')
    .option('--name <master>', 'the Sentinel master name (with --sentinels)')
    .option('--prefix <prefix>', "the objects' key prefix", process.env.RLOCK_PREFIX ?? 'rlock')
    .option('--timeout <ms>', 'limit on each Redis call, in ms', parseMs, 5_000)
    .option('--json', 'print JSON (ls and show: one document; watch: one line per frame)')
    .exitOverride()
    .configureOutput({ writeOut: (text) => void io.stdout.write(text), writeErr: (text) => void io.stderr.write(redactUrls(text)) })
    .addHelpText('after', EXIT_CODES_HELP);

  program
    .command('ls')
    .description('list objects whose names match a glob (SCAN, never KEYS)')
    .argument('[pattern]', 'glob over object names (*, ?, [abc])', '*')
    .option('--max <n>', 'list at most this many objects', parseCount, 1_000)
    .option('--page <n>', 'objects read per SCAN page', parseCount, 100)
    .action(async (pattern: string, options: { max: number; page: number }, command: Command) => {
      const { flags, connection } = open(command);
      const found: ObjectInfo[] = [];
      let truncated = false;
      for await (const page of connection.client.list({ match: pattern, limit: Math.min(options.page, options.max), entryLimit: 10 })) {
        found.push(...page);
        if (found.length >= options.max) {
          truncated = true;
          break;
        }
      }
      const listed = found.slice(0, options.max);
      if (flags.json) out(safeJson(listed, 2));
      else if (listed.length > 0) out(table([LIST_HEADER, ...listed.map(listRow)]));
      if (truncated) err(`stopped at --max ${options.max}: there may be more (narrow the pattern or raise --max)`);
      if (listed.length === 0) {
        if (!flags.json) err(`nothing matches ${JSON.stringify(pattern)} under the prefix ${JSON.stringify(flags.prefix)} on ${connection.server}`);
        exitCode = EXIT.notFound;
      }
    });

  program
    .command('show')
    .description('show one object: its kind, holders (owner, count, token, lease left, held for), waiters, permits or count')
    .argument('<name>', 'the object name')
    .addOption(kindOption())
    .option('--limit <n>', 'list at most this many holders and waiters', parseCount, 100)
    .action(async (name: string, options: { kind?: ObjectKind; limit: number }, command: Command) => {
      const { flags, connection } = open(command);
      const info = await connection.client.inspect(name, { kind: options.kind, limit: options.limit });
      if (flags.json) out(safeJson(info ?? null, 2));
      else if (info) out(describeObject(info));
      if (!info) {
        if (!flags.json) err(`no object named ${JSON.stringify(name)} under the prefix ${JSON.stringify(flags.prefix)} on ${connection.server}`);
        exitCode = EXIT.notFound;
      }
    });

  program
    .command('unlock')
    .description('force-unlock a lock whoever holds it, waking its waiters (asks first on a terminal unless --yes)')
    .argument('<name>', 'the lock name')
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .addOption(kindOption())
    .action(async (name: string, options: { yes?: boolean; kind?: ObjectKind }, command: Command) => {
      const { flags, connection } = open(command);
      const { client } = connection;
      const info = await client.inspect(name, { kind: options.kind, limit: 1 });
      const report = (released: boolean, kind: string | undefined, reason?: string): void => {
        if (flags.json) out(safeJson({ name, kind: kind ?? null, released, ...(reason ? { reason } : {}) }));
        else if (released) out(`released ${kind} ${JSON.stringify(name)}`);
        else if (reason) err(reason);
        exitCode = released ? EXIT.ok : EXIT.notFound;
      };
      if (!info) return report(false, undefined, `no object named ${JSON.stringify(name)} on ${connection.server}: nothing released`);
      const kind = KINDS.find((registered) => registered.name === info.kind);
      if (!kind?.forceUnlock) {
        return report(false, info.kind, `${JSON.stringify(name)} is a ${info.kind}, not a lock: nothing released`);
      }
      const holders = info.holders.map((holder) => `${holder.owner} (token ${holder.token ?? '-'})`).join(', ') || 'nobody';
      const question = `Force-unlock ${info.kind} ${JSON.stringify(name)}, held by ${holders}? Its holders lose it at once.`;
      if (!(await confirmed('unlock', options.yes, question))) return report(false, info.kind, 'declined: nothing released');
      // The kind's own getter makes the object: its force-unlock runs the kind's script.
      const released = await kind.forceUnlock(client[kind.method](name) as never);
      report(released, info.kind, released ? undefined : `${JSON.stringify(name)} was free: nothing released`);
    });

  program
    .command('release')
    .description('release one permit of a permit-expirable semaphore by its id, whoever holds it (asks first on a terminal unless --yes)')
    .argument('<name>', 'the semaphore name')
    .argument('<permit>', "the permit's id (rlock show lists them as holders; put an id that starts with - after --)")
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .action(async (name: string, permit: string, options: { yes?: boolean }, command: Command) => {
      const { flags, connection } = open(command);
      const { client } = connection;
      const info = await client.inspect(name, { limit: 1 });
      const report = (released: boolean, reason?: string): void => {
        if (flags.json) out(safeJson({ name, permit, released, ...(reason ? { reason } : {}) }));
        else if (released) out(`released permit ${JSON.stringify(permit)} of ${JSON.stringify(name)}`);
        else if (reason) err(reason);
        exitCode = released ? EXIT.ok : EXIT.notFound;
      };
      if (!info) return report(false, `no object named ${JSON.stringify(name)} on ${connection.server}: nothing released`);
      if (info.kind !== 'permitExpirableSemaphore') {
        return report(false, `${JSON.stringify(name)} is a ${info.kind}, not a permit-expirable semaphore: nothing released`);
      }
      const question = `Release permit ${JSON.stringify(permit)} of ${JSON.stringify(name)}? Its holder loses it.`;
      if (!(await confirmed('release', options.yes, question))) return report(false, 'declined: nothing released');
      try {
        await client.getPermitExpirableSemaphore(name).release(permit);
      } catch (error) {
        if (error instanceof IllegalMonitorStateError) return report(false, error.message); // not held: released, lapsed or unknown
        throw error;
      }
      report(true);
    });

  program
    .command('watch')
    .description('show one object again and again (a live view on a terminal); stop with Ctrl-C or --count')
    .argument('<name>', 'the object name')
    .addOption(kindOption())
    .option('--interval <ms>', 'time between frames, in ms', parseMs, 1_000)
    .option('--count <n>', 'stop after this many frames', parseCount)
    .option('--limit <n>', 'list at most this many holders and waiters', parseCount, 20)
    .action(async (name: string, options: { kind?: ObjectKind; interval: number; count?: number; limit: number }, command: Command) => {
      const { flags, connection } = open(command);
      const stop = new AbortController();
      const onInterrupt = (): void => stop.abort();
      process.once('SIGINT', onInterrupt);
      const live = io.stdout.isTTY === true && !flags.json;
      try {
        for (let frame = 0; options.count === undefined || frame < options.count; frame++) {
          if (frame > 0 && !(await pause(options.interval, stop.signal))) break;
          const info = await connection.client.inspect(name, { kind: options.kind, limit: options.limit });
          if (flags.json) {
            out(safeJson(info ?? null));
            continue;
          }
          const at = new Date(info?.serverTimeMs ?? Date.now()).toISOString();
          const body = info ? describeObject(info) : `no object named ${JSON.stringify(name)} on ${connection.server}`;
          if (live) io.stdout.write(`\x1b[2J\x1b[H${escapeLines(`${escapeText(name)}  every ${options.interval} ms  ${at}  (Ctrl-C to stop)\n\n${body}`)}\n`);
          else out(`${frame > 0 ? '\n' : ''}--- ${at}\n${body}`);
        }
      } finally {
        process.removeListener('SIGINT', onInterrupt);
      }
    });

  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    exitCode = exitCodeOf(error, err, connection);
  } finally {
    await connection?.close();
  }
  return exitCode;
}

/** The exit code of a failure, after saying what it was (commander has said it for its own). */
function exitCodeOf(error: unknown, err: (text: string) => void, connection: CliConnection | undefined): number {
  if (error instanceof CommanderError) {
    return ['commander.helpDisplayed', 'commander.help', 'commander.version'].includes(error.code) ? EXIT.ok : EXIT.usage;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof UsageError || error instanceof InvalidArgumentError) {
    err(message);
    return EXIT.usage;
  }
  if (error instanceof RedisUnavailableError) {
    // The socket's error (address and code) says more than the command's
    // summary of it; a timeout on a live connection has only the latter.
    err(`Redis unreachable${connection ? ` at ${connection.server}` : ''}: ${connection?.connectionFailure() ?? message}`);
    return EXIT.unreachable;
  }
  err(message);
  return EXIT.failure;
}

function parseMs(value: string): number {
  const ms = Number(value);
  if (!/^\d+$/.test(value) || ms < 1 || ms > 2 ** 31 - 1) throw new CommanderArgumentError('expected a whole number of ms from 1 to 2147483647');
  return ms;
}

function parseCount(value: string): number {
  const count = Number(value);
  if (!/^\d+$/.test(value) || count < 1 || count > 10_000) throw new CommanderArgumentError('expected a whole number from 1 to 10000');
  return count;
}

/** Resolves true after `ms`, or false at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function packageVersion(): string {
  try {
    // dist/esm/cli/program.js → the package's package.json.
    const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return manifest.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}
