import { nanoid } from 'nanoid';
import type { Deployment } from '../../deployment/deployment.js';
import type { AcquireReply } from '../../engine/acquire.js';
import { boundedCall, toRLockError } from '../../engine/bounded-call.js';
import type { Hold } from '../../engine/hold.js';
import type { ReleaseReply } from '../../engine/release.js';
import type { RenewableHold, RenewOutcome } from '../../engine/renewal.js';
import { registerScripts, type ScriptCall } from '../../engine/scripts.js';
import { DEFAULT_DRIFT_FACTOR } from '../../engine/time.js';
import type { WaitQueue } from '../../engine/wait-queue.js';
import { SCRIPTS } from '../scripts.generated.js';
import type { LockKeys } from './keys.js';
import type { LockStore, OwnerHoldRead } from './lock-store.js';

const LOCK_SCRIPTS = {
  acquire: SCRIPTS.lockAcquire,
  release: SCRIPTS.lockRelease,
  cancel: SCRIPTS.lockCancel,
  renew: SCRIPTS.lockRenew,
  forceUnlock: SCRIPTS.lockForceUnlock,
};

const RENEW_OUTCOMES: Record<number, RenewOutcome> = { 1: 'renewed', 0: 'gone', [-1]: 'taken' };

/** Renewal kind of a reentrant lock's holds on one deployment. */
export const LOCK_KIND = 'lock';

/**
 * The reentrant lock's protocol on one deployment: its scripts, called with
 * rlock's own time bound, and its reads. Used by the single-server client, and
 * by Redlock once per master.
 */
export class ServerLockStore implements LockStore {
  readonly counting = 'server';
  readonly driftFactor = DEFAULT_DRIFT_FACTOR;
  readonly headOnly = false;
  readonly kind = LOCK_KIND;
  private readonly scripts: Record<keyof typeof LOCK_SCRIPTS, ScriptCall>;
  private readonly sharded: string;

  constructor(
    readonly deployment: Deployment,
    private readonly timeoutMs: number,
    /** How long the markers of a release or a cancel live, in ms (a replay arrives within it). */
    private readonly replayWindowMs: number,
  ) {
    this.scripts = registerScripts(deployment.redis, LOCK_SCRIPTS);
    this.sharded = deployment.sharded ? '1' : '0';
  }

  async acquire(keys: LockKeys, owner: string, leaseMs: number, op: string): Promise<AcquireReply> {
    const reply = (await boundedCall(
      () => this.scripts.acquire(keys.lock, keys.fence, keys.cancelledPrefix + op, owner, leaseMs, op),
      this.timeoutMs,
      'acquire',
      keys.lock,
    )) as [number, string | number | undefined, number | string | undefined];
    if (reply[0] === 1) return { granted: true, token: String(reply[1]), count: Number(reply[2]) };
    // A cancelled op was refused: try again at once (with a new op).
    if (reply[0] === -1) return { granted: false, retryInMs: 0 };
    return { granted: false, retryInMs: Number(reply[1]), holder: String(reply[2]) };
  }

  async cancel(keys: LockKeys, owner: string, op: string, all = false): Promise<boolean> {
    const reply = await boundedCall(
      () =>
        this.scripts.cancel(
          keys.lock,
          keys.released,
          keys.cancelledPrefix + op,
          owner,
          `${op}:cancel`,
          op,
          all ? '1' : '0',
          this.replayWindowMs,
          this.sharded,
        ),
      this.timeoutMs,
      'cancel',
      keys.lock,
    );
    return reply === 1;
  }

  release(keys: LockKeys, hold: Hold, op: string, all = false): Promise<ReleaseReply> {
    return this.releaseAs(keys, hold.owner, hold.token, op, all);
  }

  /** One release of `owner`'s hold (with `token`, when given: never a newer hold). */
  async releaseAs(keys: LockKeys, owner: string, token: string | undefined, op: string, all: boolean): Promise<ReleaseReply> {
    const reply = (await boundedCall(
      () => this.scripts.release(keys.lock, keys.released, owner, op, all ? '1' : '0', token ?? '', this.replayWindowMs, this.sharded),
      this.timeoutMs,
      'release',
      keys.lock,
    )) as [number, number, number?];
    if (reply[0] === 1) return { released: true, remaining: Number(reply[1]), receivers: Number(reply[2] ?? 0) };
    return { released: false, reason: reply[1] === 1 ? 'taken' : 'expired' };
  }

  async finishRelease(keys: LockKeys, hold: Hold, op: string): Promise<'released' | 'gone'> {
    const reply = await this.release(keys, hold, op, true);
    return reply.released ? 'released' : 'gone';
  }

  onMessage(_payload: string, queue: WaitQueue): void {
    // 'unlock' and 'force' both free the lock: one local waiter tries.
    queue.released();
  }

  batchKey(hold: RenewableHold): string {
    return this.deployment.batchKey(hold.key);
  }

  /** Renews a batch of holds of one server (or slot) in one script call. */
  async renew(holds: readonly RenewableHold[]): Promise<RenewOutcome[]> {
    const codes = await this.renewItems(holds.map((hold) => ({ key: hold.key, owner: hold.owner, token: hold.token ?? '', leaseMs: hold.leaseMs })));
    return codes.map((code) => RENEW_OUTCOMES[code] ?? 'taken');
  }

  /** One renew-n call; one code per item: 1 renewed, 0 gone, −1 taken. */
  async renewItems(items: readonly { key: string; owner: string; token: string; leaseMs: number }[]): Promise<number[]> {
    const args: (string | number)[] = [items.length];
    for (const item of items) args.push(item.key);
    for (const item of items) args.push(item.owner, item.token, item.leaseMs);
    return (await boundedCall(() => this.scripts.renew(...args), this.timeoutMs, `renew of ${items.length} holds`, items[0]?.key ?? '')) as number[];
  }

  async clear(hold: Hold): Promise<boolean> {
    const reply = await this.release(keysOfHold(hold), hold, nanoid(), true);
    return reply.released;
  }

  async isLocked(keys: LockKeys): Promise<boolean> {
    return (await boundedCall(() => this.deployment.redis.exists(keys.lock), this.timeoutMs, 'EXISTS', keys.lock)) === 1;
  }

  async ownerHold(keys: LockKeys, _name: string, owner: string): Promise<OwnerHoldRead> {
    const holder = await this.readHolder(keys);
    return holder?.owner === owner ? { held: true, count: holder.count } : { held: false, count: 0 };
  }

  /** owner and count of the hold, or undefined when free. */
  async readHolder(keys: LockKeys): Promise<{ owner: string; count: number } | undefined> {
    const [owner, count] = await boundedCall(() => this.deployment.redis.hmget(keys.lock, 'owner', 'count'), this.timeoutMs, 'a read', keys.lock);
    return owner ? { owner, count: Number(count) } : undefined;
  }

  /** Who holds the lock and its PTTL, read atomically (MULTI), so the TTL is that holder's. */
  async readLease(keys: LockKeys): Promise<{ owner: string | undefined; pttlMs: number }> {
    const replies = await boundedCall(
      () => this.deployment.redis.multi().hget(keys.lock, 'owner').pttl(keys.lock).exec(),
      this.timeoutMs,
      'a read',
      keys.lock,
    );
    const [owner, pttl] = replies ?? [];
    const failure = !owner || !pttl ? new Error('the transaction was discarded') : (owner[0] ?? pttl[0]);
    if (failure) throw toRLockError(failure, 'a read', keys.lock);
    return { owner: typeof owner?.[1] === 'string' ? owner[1] : undefined, pttlMs: Number(pttl?.[1]) };
  }

  async pttl(keys: LockKeys): Promise<number> {
    return boundedCall(() => this.deployment.redis.pttl(keys.lock), this.timeoutMs, 'PTTL', keys.lock);
  }

  async forceUnlock(keys: LockKeys): Promise<boolean> {
    const reply = await boundedCall(() => this.scripts.forceUnlock(keys.lock, this.sharded), this.timeoutMs, 'forceUnlock', keys.lock);
    return reply === 1;
  }
}

/** The keys a release of `hold` needs, from its lock key. */
export function keysOfHold(hold: Hold): LockKeys {
  return { lock: hold.key, released: `${hold.key}:released`, channel: `${hold.key}:release`, fence: '', cancelledPrefix: `${hold.key}:cancelled:` };
}
