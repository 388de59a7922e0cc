import type { Redis } from 'ioredis';
import { RedisCommandError } from '../errors.js';
import { boundedCall } from './bounded-call.js';

/** A server's eviction settings, as it reported them. */
export interface EvictionSettings {
  /** `maxmemory-policy`: `noeviction`, `allkeys-lru`, `volatile-ttl`, … */
  readonly policy: string;
  /** `maxmemory` in bytes (0: no limit set), when reported. */
  readonly maxmemoryBytes: number | undefined;
}

/**
 * `maxmemory-policy` and `maxmemory` through CONFIG GET, or INFO memory where CONFIG is refused; read-only, bounded by `timeoutMs`.
 * Resolves with what the server said: its settings; `refused` when it refused both CONFIG GET and INFO (an ACL, a renamed command),
 * so there is nothing to learn from it; `unanswered` when it did not answer (ask again once it is back).
 */
export async function readEvictionSettings(node: Redis, timeoutMs: number): Promise<EvictionSettings | 'refused' | 'unanswered'> {
  try {
    const reply = await boundedCall(() => node.call('CONFIG', 'GET', 'maxmemory*'), timeoutMs, 'CONFIG GET', 'maxmemory-policy');
    const settings = fromConfig(reply);
    if (settings) return settings;
  } catch (error) {
    if (!(error instanceof RedisCommandError)) return 'unanswered';
  }
  try {
    const reply = await boundedCall(() => node.call('INFO', 'memory'), timeoutMs, 'INFO', 'memory');
    return fromInfo(reply) ?? 'refused';
  } catch (error) {
    return error instanceof RedisCommandError ? 'refused' : 'unanswered';
  }
}

/** CONFIG GET's flat `[name, value, …]` (RESP2; a map in RESP3). */
function fromConfig(reply: unknown): EvictionSettings | undefined {
  const pairs = Array.isArray(reply) ? reply.map(String) : reply !== null && typeof reply === 'object' ? Object.entries(reply).flat().map(String) : [];
  const values = new Map<string, string>();
  for (let i = 0; i + 1 < pairs.length; i += 2) values.set(pairs[i] as string, pairs[i + 1] as string);
  return settingsOf(values.get('maxmemory-policy'), values.get('maxmemory'));
}

/** INFO memory's `maxmemory_policy:<policy>` and `maxmemory:<bytes>` lines. */
function fromInfo(reply: unknown): EvictionSettings | undefined {
  const text = typeof reply === 'string' ? reply : Buffer.isBuffer(reply) ? reply.toString() : '';
  const field = (name: string): string | undefined => new RegExp(`^${name}:(\\S+)\\s*$`, 'm').exec(text)?.[1];
  return settingsOf(field('maxmemory_policy'), field('maxmemory'));
}

/** Settings only from a policy Redis could have written: lower-case words and dashes; anything else is no answer. */
function settingsOf(policy: string | undefined, maxmemory: string | undefined): EvictionSettings | undefined {
  if (policy === undefined || !/^[a-z][a-z-]{0,31}$/.test(policy)) return undefined;
  const bytes = maxmemory !== undefined && /^\d{1,20}$/.test(maxmemory) ? Number(maxmemory) : undefined;
  return { policy, maxmemoryBytes: bytes };
}
