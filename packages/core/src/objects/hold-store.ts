import type { Hold } from '../engine/hold.js';
import type { HoldKind } from '../engine/hold-kinds.js';
import type { RenewableHold, RenewOutcome } from '../engine/renewal.js';
import { ObjectStore, renewOutcome } from './object-store.js';

/** One hold to renew: its mode says which of its record's fields hold it (a read-write lock's). */
export interface RenewItem {
  readonly key: string;
  readonly owner: string;
  readonly token: string;
  readonly leaseMs: number;
  readonly mode: string;
}

export const renewItem = (hold: Hold, leaseMs: number): RenewItem => ({ key: hold.key, owner: hold.owner, token: hold.token ?? '', leaseMs, mode: hold.mode });

/** A store whose grants are leased holds (a lock's, a permit's): renewed in batches, one call of its renew script per batch. */
export abstract class HoldStore extends ObjectStore implements HoldKind {
  batchKey(hold: RenewableHold): string {
    return this.deployment.batchKey(hold.key);
  }

  async renew(holds: readonly RenewableHold[]): Promise<RenewOutcome[]> {
    const codes = await this.renewItems(holds.map((hold) => renewItem(hold as Hold, hold.leaseMs)));
    return this.renewed(codes, holds[0]?.key ?? '');
  }

  /** Extends one held lease to max(current, `leaseMs`) on the server. */
  async extend(hold: Hold, leaseMs: number): Promise<RenewOutcome> {
    const [code] = await this.renewItems([renewItem(hold, leaseMs)]);
    return renewOutcome(code);
  }

  /** One call of the renew script; one code per item: 1 renewed, 0 gone, −1 taken. */
  protected abstract renewItems(items: readonly RenewItem[]): Promise<number[]>;

  abstract clear(hold: Hold): Promise<boolean>;
}
