import type { Deployment } from '../../connection/deployment.js';
import { HoldStore, type RenewItem } from '../hold-store.js';
import { asCodes, isOne } from '../object-store.js';
import type { AcquireReply } from '../../engine/attempt.js';
import type { Hold } from '../../engine/hold.js';
import type { ReleaseReply } from '../../engine/release.js';
import { SCRIPTS } from '../scripts.generated.js';
import { keysOfMain, permitMarker, type PermitSemaphoreKeys } from './keys.js';

/** Renewal kind of leased permits: the watchdog renews them in batches of their own. */
export const PERMIT_KIND = 'permit';

function parseAcquire(reply: unknown): AcquireReply {
  const [code, second] = reply as [number, string | number | undefined];
  if (code === 1) return { granted: true, token: String(second), count: 1 };
  // This id was cancelled before it arrived: the next try (a new id) goes at once.
  if (code === -1) return { granted: false, retryInMs: 0 };
  return { granted: false, retryInMs: Number(second) };
}

function parseRelease(reply: unknown): ReleaseReply {
  const [code, second] = reply as [number, number];
  if (code === 1) return { released: true, remaining: 0, receivers: Number(second) };
  return { released: false, reason: second === 1 ? 'taken' : 'expired' };
}

/** The permit semaphore's scripts (each reclaims lapsed permits first) and the hold kind of its permits, each owned by its id. */
export class PermitStore extends HoldStore {
  private clears = 0;

  constructor(
    deployment: Deployment,
    replayWindowMs: number,
    /** Qualifies this client's release ops in the markers. */
    private readonly clientId: string,
  ) {
    super(deployment, replayWindowMs);
  }

  /** What every script takes beside its own: each reclaims lapsed permits and announces. */
  private pool(keys: PermitSemaphoreKeys) {
    return { permits: keys.permits, leases: keys.leases, holders: keys.holders, sharded: this.sharded, channel: keys.channel };
  }

  private marked(keys: PermitSemaphoreKeys, marker: string) {
    return { ...this.pool(keys), marker, replayWindowMs: this.replayWindowMs };
  }

  acquire(keys: PermitSemaphoreKeys, id: string, leaseMs: number): Promise<AcquireReply> {
    // One literal on the hot paths (acquire, release): a spread of pool() costs more client CPU than the call's own work.
    const { permits, leases, holders, channel, fence } = keys;
    const args = { permits, leases, holders, sharded: this.sharded, channel, fence, marker: permitMarker(keys, id), id, leaseMs };
    // A rejection (too few replicas) makes the engine undo the grant.
    return this.write(SCRIPTS.permitSemaphoreAcquire, args, 'acquire', keys.permits, parseAcquire, (value) => value.granted);
  }

  /** Cancels the acquire of permit `id`: whether it ran, will run late, or never arrives, it leaves no permit. */
  cancel(keys: PermitSemaphoreKeys, id: string): Promise<boolean> {
    return this.transport.run(SCRIPTS.permitSemaphoreCancel, { ...this.marked(keys, permitMarker(keys, id)), id }, 'cancel', keys.permits, isOne);
  }

  release(keys: PermitSemaphoreKeys, id: string, token: string | undefined, op: string): Promise<ReleaseReply> {
    const { permits, leases, holders, channel } = keys;
    const { sharded, replayWindowMs } = this;
    const args = {
      permits,
      leases,
      holders,
      sharded,
      channel,
      marker: permitMarker(keys, id),
      replayWindowMs,
      id,
      token: token ?? '',
      op: `${this.clientId}:${op}`,
    };
    return this.transport.run(SCRIPTS.permitSemaphoreRelease, args, 'release', keys.permits, parseRelease);
  }

  trySetPermits(keys: PermitSemaphoreKeys, marker: string, permits: number): Promise<boolean> {
    const args = { ...this.marked(keys, marker), kind: keys.kind, count: permits };
    return this.transport.run(SCRIPTS.permitSemaphoreTrySetPermits, args, 'trySetPermits', keys.permits, isOne);
  }

  addPermits(keys: PermitSemaphoreKeys, marker: string, delta: number): Promise<number> {
    const args = { ...this.marked(keys, marker), kind: keys.kind, delta };
    return this.transport.run(SCRIPTS.permitSemaphoreAddPermits, args, 'addPermits', keys.permits, Number);
  }

  available(keys: PermitSemaphoreKeys): Promise<number> {
    return this.transport.run(SCRIPTS.permitSemaphoreAvailable, this.pool(keys), 'availablePermits', keys.permits, Number);
  }

  /** One permit-semaphore/renew.lua call: each lease becomes max(current, now + `leaseMs`). */
  protected renewItems(items: readonly RenewItem[]): Promise<number[]> {
    const held = items.map(({ key, owner: id, token, leaseMs }) => {
      const { permits, leases, holders, channel } = keysOfMain(key);
      return { permits, leases, holders, id, token, leaseMs, channel };
    });
    const args = { sharded: this.sharded, items: held };
    return this.transport.run(SCRIPTS.permitSemaphoreRenew, args, `renew of ${items.length} permits`, items[0]?.key ?? '', asCodes);
  }

  /** Releases what is left of permit `hold` (checked by id and token): on close, and after a loss. */
  async clear(hold: Hold): Promise<boolean> {
    return (await this.release(keysOfMain(hold.key), hold.owner, hold.token, `clear/${++this.clears}`)).released;
  }
}
