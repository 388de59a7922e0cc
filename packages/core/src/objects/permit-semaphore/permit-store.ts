import type { Deployment } from '../../connection/deployment.js';
import { isOne, ObjectStore, renewOutcome } from '../object-store.js';
import type { AcquireReply } from '../../engine/attempt.js';
import type { Hold } from '../../engine/hold.js';
import type { HoldKind } from '../../engine/hold-kinds.js';
import type { ReleaseReply } from '../../engine/release.js';
import type { RenewableHold, RenewOutcome } from '../../engine/renewal.js';
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

const asNumber = (reply: unknown): number => Number(reply);
const asCodes = (reply: unknown): number[] => reply as number[];

/** The permit semaphore's scripts (each reclaims lapsed permits first) and the {@link HoldKind} of its permits. */
export class PermitStore extends ObjectStore implements HoldKind {
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
    const args = {
      permits: keys.permits,
      leases: keys.leases,
      holders: keys.holders,
      sharded: this.sharded,
      channel: keys.channel,
      fence: keys.fence,
      marker: permitMarker(keys, id),
      id,
      leaseMs,
    };
    // A rejection (too few replicas) makes the engine undo the grant.
    return this.write(SCRIPTS.permitSemaphoreAcquire, args, 'acquire', keys.permits, parseAcquire, (value) => value.granted);
  }

  /** Cancels the acquire of permit `id`: whether it ran, will run late, or never arrives, it leaves no permit. */
  cancel(keys: PermitSemaphoreKeys, id: string): Promise<boolean> {
    return this.transport.run(SCRIPTS.permitSemaphoreCancel, { ...this.marked(keys, permitMarker(keys, id)), id }, 'cancel', keys.permits, isOne);
  }

  release(keys: PermitSemaphoreKeys, id: string, token: string | undefined, op: string): Promise<ReleaseReply> {
    const args = {
      permits: keys.permits,
      leases: keys.leases,
      holders: keys.holders,
      sharded: this.sharded,
      channel: keys.channel,
      marker: permitMarker(keys, id),
      replayWindowMs: this.replayWindowMs,
      id,
      token: token ?? '',
      op: `${this.clientId}:${op}`,
    };
    return this.transport.run(SCRIPTS.permitSemaphoreRelease, args, 'release', keys.permits, parseRelease);
  }

  trySetPermits(keys: PermitSemaphoreKeys, marker: string, permits: number): Promise<boolean> {
    return this.transport.run(
      SCRIPTS.permitSemaphoreTrySetPermits,
      { ...this.marked(keys, marker), kind: keys.kind, count: permits },
      'trySetPermits',
      keys.permits,
      isOne,
    );
  }

  addPermits(keys: PermitSemaphoreKeys, marker: string, delta: number): Promise<number> {
    return this.transport.run(
      SCRIPTS.permitSemaphoreAddPermits,
      { ...this.marked(keys, marker), kind: keys.kind, delta },
      'addPermits',
      keys.permits,
      asNumber,
    );
  }

  available(keys: PermitSemaphoreKeys): Promise<number> {
    return this.transport.run(SCRIPTS.permitSemaphoreAvailable, this.pool(keys), 'availablePermits', keys.permits, asNumber);
  }

  batchKey(hold: RenewableHold): string {
    return this.deployment.batchKey(hold.key);
  }

  async renew(holds: readonly RenewableHold[]): Promise<RenewOutcome[]> {
    const codes = await this.renewItems(holds.map((hold) => ({ key: hold.key, id: hold.owner, token: hold.token ?? '', leaseMs: hold.leaseMs })));
    return this.renewed(codes, holds[0]?.key ?? '');
  }

  /** Extends one permit's lease to max(current, now + `leaseMs`) on the server. */
  async extend(hold: Hold, leaseMs: number): Promise<RenewOutcome> {
    const [code] = await this.renewItems([{ key: hold.key, id: hold.owner, token: hold.token ?? '', leaseMs }]);
    return renewOutcome(code);
  }

  private renewItems(items: readonly { key: string; id: string; token: string; leaseMs: number }[]): Promise<number[]> {
    const permits = items.map(({ key, id, token, leaseMs }) => {
      const keys = keysOfMain(key);
      return { permits: keys.permits, leases: keys.leases, holders: keys.holders, id, token, leaseMs, channel: keys.channel };
    });
    return this.transport.run(
      SCRIPTS.permitSemaphoreRenew,
      { sharded: this.sharded, items: permits },
      `renew of ${items.length} permits`,
      items[0]?.key ?? '',
      asCodes,
    );
  }

  /** Releases what is left of permit `hold` (checked by id and token): on close, and after a loss. */
  async clear(hold: Hold): Promise<boolean> {
    const reply = await this.release(keysOfMain(hold.key), hold.owner, hold.token, `clear/${++this.clears}`);
    return reply.released;
  }
}
