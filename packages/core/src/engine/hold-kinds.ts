import type { Hold } from './hold.js';
import type { RenewableHold, RenewalBackend, RenewOutcome } from './renewal.js';
import type { Telemetry } from '../observability/telemetry.js';

/** One kind of hold (lock hold, permit…): how its leases renew in batches and how its remains are cleared. */
export interface HoldKind {
  /** Holds with the same batch key may share a renew call (one server; on a Cluster, one slot). */
  batchKey(hold: RenewableHold): string;
  /** Renews a batch with one call (per server): one outcome per hold, in order. */
  renew(holds: readonly RenewableHold[]): Promise<RenewOutcome[]>;
  /** Releases what is left of `hold` by owner and token (never a newer hold): on close, and after a loss so waiters skip its TTL. */
  clear(hold: Hold): Promise<boolean>;
}

/** Holds per renew call: bounds a call's size and its time in Redis. */
export const MAX_RENEW_BATCH = 100;

/** A client's kinds of hold as its one {@link RenewalBackend}: batches key by kind, then the kind's own key. */
export class HoldKinds implements RenewalBackend {
  readonly maxBatch = MAX_RENEW_BATCH;
  private readonly kinds = new Map<string, HoldKind>();

  constructor(private readonly telemetry: Telemetry) {}

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

  /** Each batch call timed (`rlock.renewal.duration`, `rlock:renewal`) while something listens. */
  renew(holds: readonly RenewableHold[]): Promise<RenewOutcome[]> {
    const first = holds[0];
    if (first === undefined) return Promise.resolve([]);
    const end = this.telemetry.startRenewal(holds.length);
    const renewing = this.get(first.kind).renew(holds);
    if (end === undefined) return renewing;
    return renewing.then(
      (outcomes) => {
        end('ok');
        return outcomes;
      },
      (error: unknown) => {
        end('error', error);
        throw error;
      },
    );
  }
}
