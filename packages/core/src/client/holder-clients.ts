import type { ClientDirectory } from '../connection/client-names.js';
import type { TimeoutHolder } from '../errors.js';
import type { ObjectInfo } from './inspect-types.js';

/** `info` with each holder's client (name, host, pid) where the server's CLIENT LIST names it. */
export async function withHolderClients(info: ObjectInfo | undefined, directory: ClientDirectory): Promise<ObjectInfo | undefined> {
  if (!info || info.holders.length === 0) return info;
  const clients = await directory.clientsAt(info.key);
  if (clients.size === 0) return info;
  const holders = info.holders.map((holder) => {
    // The client id in an owner id `<clientId>:<taskId>`; a permit's owner is the client id itself.
    const client = clients.get(holder.owner.split(':', 1)[0] ?? holder.owner);
    return client ? { ...holder, client } : holder;
  });
  return { ...info, holders };
}

/** The first holder of `info`, as a LockAcquireTimeoutError describes it. */
export function timeoutHolderOf(info: ObjectInfo | undefined): TimeoutHolder | undefined {
  const holder = info?.holders[0];
  if (!info || !holder) return undefined;
  return {
    owner: holder.owner,
    ...(holder.client ? { client: holder.client } : {}),
    ...(holder.acquiredAtMs === undefined ? {} : { heldMs: Math.max(0, info.serverTimeMs - holder.acquiredAtMs) }),
    ttlMs: holder.ttlMs,
  };
}
