import type { LockCommands } from './lock-commands.js';
import type { RenewableHold, RenewalBackend, RenewOutcome } from './lease-renewal.js';

/** Holds per renew script call: bounds a call's size and its time in Redis. */
export const MAX_RENEW_BATCH = 100;

const OUTCOMES: Record<number, RenewOutcome> = { 1: 'renewed', 0: 'gone', [-1]: 'taken' };

/**
 * Renewal on one standalone Redis: every hold may share a batch, since a
 * standalone server does not split keys into slots.
 */
export class SingleServerRenewal implements RenewalBackend {
  readonly maxBatch = MAX_RENEW_BATCH;

  constructor(private readonly commands: LockCommands) {}

  batchKey(): string {
    return 'server';
  }

  async renew(holds: readonly RenewableHold[]): Promise<RenewOutcome[]> {
    const codes = await this.commands.renew(
      holds.map((hold) => ({ key: hold.key, owner: hold.owner, token: hold.token ?? '', leaseMs: hold.leaseMs })),
    );
    return codes.map((code) => OUTCOMES[code] ?? 'taken');
  }
}
