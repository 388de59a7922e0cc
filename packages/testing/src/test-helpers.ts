import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A key prefix no other test uses, so tests sharing a server never see each other's keys. */
export function uniquePrefix(): string {
  return `t${randomBytes(6).toString('hex')}`;
}

/**
 * Polls `check` every 5 ms until it is true or `timeoutMs` passes; resolves
 * whether it became true. For conditions that become true at an unknown time
 * (a signal aborting, a key expiring), instead of sleeping and hoping.
 */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return check();
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One turn of the event loop. */
export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Counts how many callers are inside a critical section at once (must stay 1 under a lock). */
export class OverlapProbe {
  inside = 0;
  maxInside = 0;
  entries = 0;

  async section(work: () => Promise<void>): Promise<void> {
    this.inside++;
    this.entries++;
    this.maxInside = Math.max(this.maxInside, this.inside);
    try {
      await work();
    } finally {
      this.inside--;
    }
  }
}

/** What {@link overlapOfTasks} needs of a client (any rlock client: a Redis one, a Redlock). */
export interface TaskRunner {
  task<T>(fn: () => Promise<T>): Promise<T>;
}

/** What {@link overlapOfTasks} needs of a lock. */
export interface SectionLock {
  lock(options: { readonly leaseMs: number }): Promise<unknown>;
  unlock(): Promise<unknown>;
}

/**
 * `tasks` tasks of `client`, each taking `lock` `rounds` times around a section two event-loop turns long (long enough
 * for another holder to enter, were the lock to let one in): the probe says how many entered and how many were inside at once.
 */
export async function overlapOfTasks(client: TaskRunner, lock: SectionLock, tasks: number, rounds: number): Promise<OverlapProbe> {
  const probe = new OverlapProbe();
  await Promise.all(
    Array.from({ length: tasks }, () =>
      client.task(async () => {
        for (let i = 0; i < rounds; i++) {
          await lock.lock({ leaseMs: 10_000 });
          try {
            await probe.section(async () => {
              await tick();
              await tick();
            });
          } finally {
            await lock.unlock();
          }
        }
      }),
    ),
  );
  return probe;
}

/** Calls of one command (lower case, e.g. 'evalsha') since the server started (`INFO commandstats`). */
export async function commandCalls(redis: Redis, command: string): Promise<number> {
  const info = await redis.info('commandstats');
  const match = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info);
  return match ? Number(match[1]) : 0;
}

/** `total_commands_processed` of the server (`INFO stats`). */
export async function commandsProcessed(redis: Redis): Promise<number> {
  const info = await redis.info('stats');
  return Number(/^total_commands_processed:(\d+)/m.exec(info)?.[1] ?? NaN);
}

/** A generated script entry as evalScript needs it (core's EmbeddedScript, without depending on core). */
export interface ScriptToEval<A> {
  readonly numberOfKeys: number | undefined;
  readonly lua: string;
  readonly args: (named: A) => (string | number)[];
}

/**
 * Runs `script` by EVAL of its text, its KEYS and ARGV by name (the order
 * comes from its header, as in the stores): a script test never writes the
 * order again. Resolves with the raw reply.
 */
export function evalScript<A>(redis: Redis, script: ScriptToEval<A>, args: NoInfer<A>): Promise<unknown> {
  const keysAndArgs = script.args(args);
  // A `-n` script's args start with its key count.
  if (script.numberOfKeys === undefined) return redis.eval(script.lua, ...(keysAndArgs as [number, ...(string | number)[]]));
  return redis.eval(script.lua, script.numberOfKeys, ...keysAndArgs);
}
