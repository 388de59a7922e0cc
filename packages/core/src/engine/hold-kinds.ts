import type { Hold } from './hold.js';
import type { RenewableHold, RenewalBackend, RenewOutcome } from './renewal.js';

/**
 * What the engine needs to know of one kind of hold (a lock hold, a waiter
 * lease, a permit…) beyond the hold itself: how its leases are renewed in
 * batches, and how what is left of it is cleared.
 */
export interface HoldKind {
  /** Holds with the same batch key may share a renew call (one server; on a Cluster, one slot). */
  batchKey(hold: RenewableHold): string;
  /** Renews a batch with one call (per server): one outcome per hold, in order. */
  renew(holds: readonly RenewableHold[]): Promise<RenewOutcome[]>;
  /**
   * Releases what is left of `hold` in Redis, checked by owner and token so it
   * never touches a newer hold: on close, and after a loss (so waiters need not
   * sit out the TTL of a lease nobody renews). Resolves true when it released it.
   */
  clear(hold: Hold): Promise<boolean>;
}

/** Holds per renew call: bounds a call's size and its time in Redis. */
export const MAX_RENEW_BATCH = 100;

/**
 * The kinds of hold a client has, and its one {@link RenewalBackend}: the
 * watchdog batches holds by {@link batchKey} (kind first, then the kind's own
 * key), and each batch goes to its kind. A new object with its own lease
 * registers a kind; the watchdog is unchanged.
 */
export class HoldKinds implements RenewalBackend {
  readonly maxBatch = MAX_RENEW_BATCH;
  private readonly kinds = new Map<string, HoldKind>();

  /** Registers `kind` (once per name). */
  register(name: string, kind: HoldKind): void {
    if (this.kinds.has(name)) throw new Error(`hold kind "${name}" is already registered`);
    this.kinds.set(name, kind);
  }

  get(name: string): HoldKind {
    const kind = this.kinds.get(name);
    if (!kind) throw new Error(`hold kind "${name}" is not registered`);
    return kind;
  }

  batchKey(hold: RenewableHold): string {
    return `${hold.kind}\u0000${this.get(hold.kind).batchKey(hold)}`;
  }

  renew(holds: readonly RenewableHold[]): Promise<RenewOutcome[]> {
    const first = holds[0];
    if (first === undefined) return Promise.resolve([]);
    return this.get(first.kind).renew(holds);
  }
}
