import { isOne, ObjectStore } from '../object-store.js';
import { SCRIPTS } from '../scripts.generated.js';
import type { SemaphoreKeys } from './keys.js';

/** A message on a semaphore's channel that names a client whose waiter has waited long (see announceNeed). */
export const NEED_PREFIX = 'need:';

export type SemaphoreAcquireReply = 'granted' | 'refused' | 'cancelled';

function parseAcquire(reply: unknown): SemaphoreAcquireReply {
  const [code] = reply as [number];
  return code === 1 ? 'granted' : code === 0 ? 'refused' : 'cancelled';
}

/** What a release answered: the available count after it, and the subscriber connections its announcement reached. */
export interface SemaphoreReleaseReply {
  readonly available: number;
  readonly receivers: number;
}

function parseRelease(reply: unknown): SemaphoreReleaseReply {
  const [available, receivers] = reply as [number, number];
  return { available: Number(available), receivers: Number(receivers) };
}

/** Marker lifetime in replay windows: an undo may come 2 × commandTimeoutMs after its acquire (later on a stalled server); one finding no marker is lost. */
const ACQUIRE_MARKER_WINDOWS = 3;

/** The semaphore's protocol: one script per state change, each with its op's marker so a replay never counts twice. */
export class SemaphoreStore extends ObjectStore {
  acquire(keys: SemaphoreKeys, marker: string, permits: number): Promise<SemaphoreAcquireReply> {
    const args = { permits: keys.permits, marker, count: permits, replayWindowMs: this.replayWindowMs * ACQUIRE_MARKER_WINDOWS };
    // A rejection (too few replicas) makes the caller undo the grant.
    return this.write(SCRIPTS.semaphoreAcquire, args, 'acquire', keys.permits, parseAcquire, (value) => value === 'granted');
  }

  private announcing(keys: SemaphoreKeys, marker: string) {
    return { permits: keys.permits, marker, kind: keys.kind, replayWindowMs: this.replayWindowMs, sharded: this.sharded, channel: keys.channel };
  }

  /** Undoes the acquire whose marker is `marker`: true when it had run and its permits are back. */
  cancel(keys: SemaphoreKeys, marker: string, permits: number): Promise<boolean> {
    const args = { ...this.announcing(keys, marker), count: permits, replayWindowMs: this.replayWindowMs * ACQUIRE_MARKER_WINDOWS };
    return this.transport.run(SCRIPTS.semaphoreCancel, args, 'cancel', keys.permits, isOne);
  }

  release(keys: SemaphoreKeys, marker: string, permits: number): Promise<SemaphoreReleaseReply> {
    // One literal, not a spread of announcing(): on this hot path a spread costs more client CPU than the call's own work.
    const args = { permits: keys.permits, marker, replayWindowMs: this.replayWindowMs, sharded: this.sharded, channel: keys.channel, count: permits };
    return this.transport.run(SCRIPTS.semaphoreRelease, args, 'release', keys.permits, parseRelease);
  }

  trySetPermits(keys: SemaphoreKeys, marker: string, permits: number): Promise<boolean> {
    return this.transport.run(SCRIPTS.semaphoreTrySetPermits, { ...this.announcing(keys, marker), count: permits }, 'trySetPermits', keys.permits, isOne);
  }

  addPermits(keys: SemaphoreKeys, marker: string, delta: number): Promise<number> {
    return this.transport.run(SCRIPTS.semaphoreAddPermits, { ...this.announcing(keys, marker), delta }, 'addPermits', keys.permits, Number);
  }

  drainPermits(keys: SemaphoreKeys, marker: string): Promise<number> {
    const args = { permits: keys.permits, marker, replayWindowMs: this.replayWindowMs };
    return this.transport.run(SCRIPTS.semaphoreDrainPermits, args, 'drainPermits', keys.permits, Number);
  }

  /** Tells other clients a waiter of `clientId` has waited long: each sends its next release through Redis. */
  announceNeed(keys: SemaphoreKeys, clientId: string): Promise<number> {
    const command = this.deployment.sharded ? 'spublish' : 'publish';
    return this.transport.call(command, [keys.channel, `${NEED_PREFIX}${clientId}`], 'announce', keys.permits, Number);
  }

  available(keys: SemaphoreKeys): Promise<number> {
    return this.transport.call('get', [keys.permits], 'GET', keys.permits, Number);
  }
}
