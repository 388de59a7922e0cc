import type { AcquireReply, ReleaseReply, ReleaseRequest } from './lock-commands.js';
import type { LockKeys } from './lock-keys.js';

/**
 * Where a lock's state lives: one Redis (LockCommands) or, composed, a quorum of
 * independent masters (Redlock). Every mutation is one atomic script per server.
 */
export interface LockBackend {
  acquire(keys: LockKeys, owner: string, leaseMs: number, op: string): Promise<AcquireReply>;
  release(keys: LockKeys, request: ReleaseRequest): Promise<ReleaseReply>;
  forceUnlock(keys: LockKeys): Promise<boolean>;
  readHolder(keys: LockKeys): Promise<{ owner: string; count: number } | undefined>;
  pttl(keys: LockKeys): Promise<number>;
  exists(keys: LockKeys): Promise<boolean>;
}
