import type { TimeoutHolder } from '@org/rlock-core';
import { ClientDirectory, HOLDER_LOOKUP_MS, objectKey, withinMs } from '@org/rlock-core/internal';
import { readValueAndPttl } from './lease-lock/read-lease.js';
import type { Master } from './master.js';

/**
 * Who holds a Redlock lock, for a LockAcquireTimeoutError: the lease lock
 * (`<owner>|<op>`) of the first master that has one, and the owner's client
 * in that master's CLIENT LIST (the connection that wrote it). Bounded by
 * HOLDER_LOOKUP_MS (at most commandTimeoutMs); never rejects.
 */
export function holderLookup(masters: readonly Master[], keyPrefix: string, commandTimeoutMs: number): (name: string) => Promise<TimeoutHolder | undefined> {
  const directories = masters.map(
    (master) =>
      new ClientDirectory(
        (key) => master.deployment.clientList(key),
        () => master.name,
      ),
  );
  const lookupMs = Math.min(HOLDER_LOOKUP_MS, commandTimeoutMs);
  const find = async (name: string): Promise<TimeoutHolder | undefined> => {
    const key = objectKey(keyPrefix, name);
    const { index, value, pttlMs } = await Promise.any(
      masters.map(async (master, index) => {
        const read = await readValueAndPttl(master.deployment, lookupMs, key);
        if (read.value === undefined) throw new Error('free on this master');
        return { index, value: read.value, pttlMs: read.pttlMs };
      }),
    );
    const owner = value.split('|', 1)[0] ?? value;
    const client = (await (directories[index] as ClientDirectory).clientsAt(key)).get(owner.split(':', 1)[0] ?? owner);
    return { owner, ...(client ? { client } : {}), ttlMs: pttlMs };
  };
  return (name) => withinMs(find(name), lookupMs, () => undefined).catch(() => undefined);
}
