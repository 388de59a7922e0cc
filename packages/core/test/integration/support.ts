import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RLockClient, type RLockClientOptions } from '@org/rlock-core';

/** A key prefix no other test uses, so tests never see each other's keys. */
export function uniquePrefix(): string {
  return `t${randomBytes(6).toString('hex')}`;
}

/** Clients made by a test file, closed after each test. */
export class ClientPool {
  private readonly clients: RLockClient[] = [];

  make(url: string, options: Partial<RLockClientOptions> = {}): RLockClient {
    const client = new RLockClient({ redis: url, keyPrefix: uniquePrefix(), ...options });
    this.clients.push(client);
    return client;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.clients.splice(0).map((client) => client.close()));
  }
}

/** Calls of one command (lower case, e.g. 'evalsha') since the server started. */
export async function commandCalls(redis: Redis, command: string): Promise<number> {
  const info = await redis.info('commandstats');
  const match = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info);
  return match ? Number(match[1]) : 0;
}

/** total_commands_processed of the server. */
export async function commandsProcessed(redis: Redis): Promise<number> {
  const info = await redis.info('stats');
  return Number(/^total_commands_processed:(\d+)/m.exec(info)?.[1] ?? NaN);
}

/** Polls `check` until it is true or `timeoutMs` passes; returns whether it became true. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return check();
}

/** Tracks how many callers are inside a critical section at once. */
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

export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
