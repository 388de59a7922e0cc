import type { Redis } from 'ioredis';

/** One Lua script, as the embed generator writes it into objects/scripts.generated.ts. */
export interface EmbeddedScript {
  /** The command name it is registered under: carries the layout version, so two rlock versions never mix scripts. */
  readonly command: string;
  /** Number of KEYS, or undefined when the caller passes it first (a `-n` script). */
  readonly numberOfKeys: number | undefined;
  readonly lua: string;
}

/** A registered script called as a method of the connection. */
export type ScriptCall = (...args: (string | number)[]) => Promise<unknown>;

const registered = new WeakMap<Redis, Set<string>>();

/**
 * Registers `scripts` on `redis` once per connection. defineCommand sends
 * EVALSHA and falls back to EVAL on NOSCRIPT, so a SCRIPT FLUSH or a restarted
 * server costs one extra round trip, not an error. Returns each script's call,
 * bound to the connection.
 */
export function registerScripts<K extends string>(redis: Redis, scripts: Readonly<Record<K, EmbeddedScript>>): Record<K, ScriptCall> {
  let done = registered.get(redis);
  if (!done) {
    done = new Set();
    registered.set(redis, done);
  }
  const calls = {} as Record<K, ScriptCall>;
  for (const id of Object.keys(scripts) as K[]) {
    const script = scripts[id];
    if (!done.has(script.command) && !(script.command in redis)) {
      redis.defineCommand(
        script.command,
        script.numberOfKeys === undefined ? { lua: script.lua } : { numberOfKeys: script.numberOfKeys, lua: script.lua },
      );
    }
    done.add(script.command);
    const method = (redis as unknown as Record<string, ScriptCall>)[script.command];
    if (!method) throw new Error(`script ${script.command} could not be registered`);
    calls[id] = method.bind(redis);
  }
  return calls;
}
