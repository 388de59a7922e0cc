import { randomBytes } from 'node:crypto';
import type { RedisFleet } from '@org/rlock-testing';
import { RedlockClient, createRedlock, type RedlockOptions } from '@org/rlock-redlock';

/** A key prefix no other test uses, so tests never see each other's keys. */
export function uniquePrefix(): string {
  return `t${randomBytes(6).toString('hex')}`;
}

/** Redlock clients made by a test file, closed after each test. */
export class RedlockPool {
  private readonly clients: RedlockClient[] = [];

  make(fleet: RedisFleet, options: Partial<RedlockOptions> = {}): RedlockClient {
    const client = createRedlock({ masters: fleet.urls(), keyPrefix: uniquePrefix(), ...options });
    // Background failures (a dead master's cancel, a renewal to retry) are expected in fault tests.
    client.on('error', () => undefined);
    this.clients.push(client);
    return client;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.clients.splice(0).map((client) => client.close()));
  }
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

/** Resolves with the signal's reason once it aborts, or rejects after `timeoutMs`. */
export function aborted(signal: AbortSignal, timeoutMs: number): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`signal did not abort within ${timeoutMs} ms`)), timeoutMs);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve(signal.reason);
      },
      { once: true },
    );
  });
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

/** The lock hash's fields on each master, `{}` where it is missing. */
export async function lockOnMasters(fleet: RedisFleet, key: string, indexes: readonly number[]): Promise<Record<string, string>[]> {
  return Promise.all(
    indexes.map(async (index) => {
      const redis = fleet.client(index);
      try {
        return await redis.hgetall(key);
      } finally {
        redis.disconnect();
      }
    }),
  );
}
