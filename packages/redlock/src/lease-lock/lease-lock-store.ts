import { SCRIPTS as CORE_SCRIPTS } from '@org/rlock-core/internal';
import { readValueAndPttl } from './read-lease.js';
import type { AcquireReply, Deployment, LockKeys, ReleaseReply, Transport } from '@org/rlock-core/internal';
import { SCRIPTS } from './scripts.generated.js';

/** `<owner>|<op>`: the value of a lease lock's key, and its tombstone's field. */
export function holderValue(owner: string, op: string): string {
  return `${owner}|${op}`;
}

/** The owner in a lease lock's value (owners hold no '|'). */
function ownerOf(value: string): string {
  const bar = value.indexOf('|');
  return bar === -1 ? value : value.slice(0, bar);
}

/** Every grant's reply: its token is the op that asked, which the caller has. */
const GRANTED: AcquireReply = Object.freeze({ granted: true, token: undefined, count: 1 });

// Replies are read by functions made once, not a closure per call.
function parseAcquire(reply: unknown): AcquireReply {
  if (reply === 1) return GRANTED;
  // A cancelled op was refused: try again at once (with a new op).
  if (reply === -1) return { granted: false, retryInMs: 0 };
  const [pttl, held] = reply as [number, string];
  return { granted: false, retryInMs: pttl, holder: ownerOf(held) };
}

function parseRelease(reply: unknown): ReleaseReply {
  const code = reply as number;
  if (code >= 0) return { released: true, remaining: 0, receivers: code };
  return { released: false, reason: code === -2 ? 'taken' : 'expired' };
}

const isOne = (reply: unknown): boolean => reply === 1;
const asCodes = (reply: unknown): number[] => reply as number[];

/** The scripts a Redlock master runs: loaded on each of its connects. forceUnlock is the reentrant lock's: a DEL and a 'force' either way. */
export const LEASE_LOCK_SCRIPTS = [...Object.values(SCRIPTS), CORE_SCRIPTS.lockForceUnlock];

/**
 * What a Redlock master holds: one string key `<owner>|<op>` with a TTL (the
 * client counts reentrancy, so `SET … NX PX` suffices). A grant's token is its op, not a fencing token.
 */
export class LeaseLockStore {
  private readonly transport: Transport;

  constructor(
    readonly deployment: Deployment,
    /** How long the markers of a release or a cancel live, in ms (a replay arrives within it). */
    private readonly replayWindowMs: number,
  ) {
    this.transport = deployment.transport;
  }

  /** Takes the lock for `owner`'s operation `op`. A grant carries no token: its token is `op` (release and renewal name it). */
  acquire(keys: LockKeys, owner: string, leaseMs: number, op: string): Promise<AcquireReply> {
    return this.transport.run(
      SCRIPTS.leaseLockAcquire,
      { lock: keys.lock, cancelled: keys.cancelled, holder: holderValue(owner, op), leaseMs },
      'acquire',
      keys.lock,
      parseAcquire,
    );
  }

  /** Cancels acquire `op` of `owner`: undone if it ran and still holds, refused if it comes later. */
  cancel(keys: LockKeys, owner: string, op: string): Promise<boolean> {
    return this.transport.run(
      SCRIPTS.leaseLockCancel,
      { lock: keys.lock, cancelled: keys.cancelled, holder: holderValue(owner, op), replayWindowMs: this.replayWindowMs, channel: keys.channel },
      'cancel',
      keys.lock,
      isOne,
    );
  }

  /** Releases `owner`'s hold taken by op `token` (any of the owner's when undefined), as release op `op`. */
  release(keys: LockKeys, owner: string, token: string | undefined, op: string): Promise<ReleaseReply> {
    return this.transport.run(
      SCRIPTS.leaseLockRelease,
      { lock: keys.lock, released: keys.released, owner, token: token ?? '', op, replayWindowMs: this.replayWindowMs, channel: keys.channel },
      'release',
      keys.lock,
      parseRelease,
    );
  }

  /** One renew.lua call; one code per item: 1 renewed, 0 gone, −1 taken. */
  renewItems(items: readonly { key: string; owner: string; token: string; leaseMs: number }[]): Promise<number[]> {
    const holds = items.map(({ key, owner, token, leaseMs }) => ({ lock: key, holder: holderValue(owner, token), leaseMs }));
    return this.transport.run(SCRIPTS.leaseLockRenew, { items: holds }, `renew of ${items.length} holds`, items[0]?.key ?? '', asCodes);
  }

  /** Who holds the lock and its PTTL, read atomically (MULTI), so the TTL is that holder's. */
  async readLease(keys: LockKeys): Promise<{ owner: string | undefined; pttlMs: number }> {
    const { value, pttlMs } = await readValueAndPttl(this.deployment, this.transport.timeoutMs, keys.lock);
    return { owner: value === undefined ? undefined : ownerOf(value), pttlMs };
  }

  /** Deletes the lock whoever holds it ('force' published); true if it was held. */
  forceUnlock(keys: LockKeys): Promise<boolean> {
    // notices '': a lease lock is no hash, and its holders hear of the loss at their next renewal.
    return this.transport.run(
      CORE_SCRIPTS.lockForceUnlock,
      { lock: keys.lock, sharded: '0', channel: keys.channel, notices: '' },
      'forceUnlock',
      keys.lock,
      isOne,
    );
  }
}
