import { createRedlock, type RedlockClient, type RedlockOptions } from '@org/rlock';
import type { Redis } from 'ioredis';
import { uniquePrefix, type RedisFleet } from '@org/rlock-testing';
import { quorumOf, rankOf } from '../../src/quorum.js';

export { uniquePrefix, eventually, tick, OverlapProbe } from '@org/rlock-testing';

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

/** A master's lease lock, read from its string `<owner>|<op>`: `{}` where the key is missing. */
export interface MasterHold {
  owner?: string;
  op?: string;
}

/** The lease lock on each master (the Redlock README's data layout). */
export async function lockOnMasters(fleet: RedisFleet, key: string, indexes: readonly number[]): Promise<MasterHold[]> {
  return Promise.all(
    indexes.map(async (index) => {
      const redis = fleet.client(index);
      try {
        const value = await redis.get(key);
        if (value === null) return {};
        const bar = value.indexOf('|');
        return { owner: value.slice(0, bar), op: value.slice(bar + 1) };
      } finally {
        redis.disconnect();
      }
    }),
  );
}

/** Writes another owner's hold on a master directly, as the acquire script would leave it (no TTL unless given). */
export async function plantHold(redis: Redis, key: string, owner: string, ttlMs?: number): Promise<void> {
  const value = `${owner}|planted`;
  await (ttlMs === undefined ? redis.set(key, value) : redis.set(key, value, 'PX', ttlMs));
}

/** The masters an uncontended round on `key` asks first (rankOf over the masters' run ids, as every client ranks them). */
export async function firstMajority(fleet: RedisFleet, key: string, size: number): Promise<number[]> {
  const runIds = await Promise.all(
    Array.from({ length: size }, async (_, index) => {
      const redis = fleet.client(index);
      try {
        return /^run_id:(\w+)/m.exec(await redis.info('server'))?.[1];
      } finally {
        redis.disconnect();
      }
    }),
  );
  return rankOf(runIds, key).slice(0, quorumOf(size));
}
