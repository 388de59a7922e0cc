import { RLockClient, type RLockClientOptions } from '@org/rlock-core';
import { uniquePrefix } from '@org/rlock-testing';
import { parseHold, type HoldRecord } from '@org/rlock-core/internal';
import type { Redis } from 'ioredis';

export { uniquePrefix, eventually, tick, OverlapProbe, commandCalls, commandsProcessed } from '@org/rlock-testing';

/** The hold a lock key records (hold-record.lua), or undefined when it is free. */
export const holdAt = async (redis: Redis, key: string): Promise<HoldRecord | undefined> => parseHold(await redis.hgetall(key));

/** Core clients made by a test file (each with its own key prefix unless given), closed after each test. */
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
