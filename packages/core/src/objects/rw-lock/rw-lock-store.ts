import type { Deployment } from '../../connection/deployment.js';
import type { EngineContext } from '../../engine/engine-context.js';
import type { Hold } from '../../engine/hold.js';
import type { HoldRegistry } from '../../engine/hold-registry.js';
import { IllegalMonitorStateError } from '../../errors.js';
import { EXCLUSIVE_LOCK, type LockVariant, type OwnerHoldRead } from '../lock/lock-store.js';
import { renewItem, type RenewItem } from '../hold-store.js';
import { ServerLockStore } from '../lock/server-lock-store.js';
import { asCodes } from '../object-store.js';
import { SCRIPTS } from '../scripts.generated.js';
import { readersKey, type RwLockKeys } from './keys.js';
import { RwLockScripts, type RwMode } from './rw-lock-scripts.js';

/** Renewal kind of read-write lock holds (either mode). */
export const RW_KIND = 'rw-lock';

/** Readers share; a refused writer's tries renew its waiter lease. */
const variantOf = (mode: RwMode): LockVariant => {
  const write = mode === 'write';
  return Object.freeze({ ...EXCLUSIVE_LOCK, object: `${mode}_lock`, mode, exclusive: write, waitersKeepPlace: write });
};

/**
 * One mode of the read-write lock: its scripts composed as the lock's are, over a record of its own (the writer's fields
 * and one per reader, each reader's lease in a zset), which it renews and reads itself. Either mode's store renews and
 * clears holds of both modes.
 */
export class RwLockStore extends ServerLockStore<RwLockKeys> {
  override readonly kind = RW_KIND;

  constructor(
    deployment: Deployment,
    context: EngineContext,
    readonly mode: RwMode,
  ) {
    super(deployment, context.commandTimeoutMs, context.keyPrefix, variantOf(mode), new RwLockScripts(deployment, context, mode));
  }

  /** A task that holds only the read lock must not wait for the write lock: it would wait for itself. */
  beforeAcquire(holds: HoldRegistry, keys: RwLockKeys, owner: string): void {
    if (this.mode !== 'write' || holds.current(keys.lock, 'write', owner)?.active) return;
    if (holds.current(keys.lock, 'read', owner)?.active) {
      throw new IllegalMonitorStateError(
        `the write lock of "${keys.lock}" was asked by a task that holds only its read lock: release the read lock first (waiting would deadlock)`,
      );
    }
  }

  /** Counted once replicas have it, as a renewal is. */
  override async extend(hold: Hold, leaseMs: number): Promise<'renewed' | 'gone' | 'taken'> {
    const [outcome] = await this.renewed(await this.renewItems([renewItem(hold, leaseMs)]), hold.key);
    return outcome ?? 'taken';
  }

  /** One rw-lock/renew.lua call, holds of either mode. */
  protected override renewItems(items: readonly RenewItem[]): Promise<number[]> {
    const holds = items.map(({ key, owner, token, leaseMs, mode }) => ({ hash: key, readers: readersKey(key), owner, token, leaseMs, mode }));
    return this.transport.run(SCRIPTS.rwLockRenew, { items: holds }, `renew of ${items.length} holds`, items[0]?.key ?? '', asCodes);
  }

  /** The write lock is held when the record's mode says so; the read lock while any reader's lease is kept. */
  override isLocked(keys: RwLockKeys): Promise<boolean> {
    if (this.mode === 'write') return this.transport.call('hget', [keys.lock, 'mode'], 'a read', keys.lock, (reply) => reply === 'write');
    return this.transport.call('zcard', [keys.readers], 'a read', keys.lock, (reply) => Number(reply) > 0);
  }

  override async ownerHold(keys: RwLockKeys, _name: string, owner: string): Promise<OwnerHoldRead> {
    const fields = this.mode === 'write' ? ['w', 'wc'] : [`r:${owner}`, `r:${owner}`];
    const [first, count] = await this.transport.call('hmget', [keys.lock, ...fields], 'a read', keys.lock, (reply) => reply as (string | null)[]);
    const held = this.mode === 'write' ? first === owner : first !== null && first !== undefined;
    return held ? { held: true, count: Number(count) } : { held: false, count: 0 };
  }
}
