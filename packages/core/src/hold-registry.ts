import type { Hold } from './hold.js';

/** What the registry needs of a hold: a core hold, or a Redlock hold. */
export interface RegisteredHold<H> {
  readonly key: string;
  readonly owner: string;
  count: number;
  /** An older generation of the owner's hold, lost with counts outstanding. */
  previous: H | undefined;
}

/**
 * The client's local view of its holds: per lock key, per owner, the current
 * generation of the owner's hold (older, lost generations with counts still
 * outstanding hang off `previous`). It also serialises the Redis operations of
 * one owner on one lock, so at most one of them is in flight: a replay after a
 * reconnect can then only concern the last one, which the scripts recognise by
 * its operation id.
 */
export class HoldRegistry<H extends RegisteredHold<H> = Hold> {
  private readonly byKey = new Map<string, Map<string, H>>();
  private readonly chains = new Map<string, Promise<unknown>>();
  private readonly background = new Set<Promise<unknown>>();

  current(key: string, owner: string): H | undefined {
    return this.byKey.get(key)?.get(owner);
  }

  /** Makes `hold` the owner's current generation. */
  set(hold: H): void {
    let owners = this.byKey.get(hold.key);
    if (!owners) {
      owners = new Map();
      this.byKey.set(hold.key, owners);
    }
    owners.set(hold.owner, hold);
  }

  /** Forgets `hold` (its count reached 0), restoring an older generation with counts left. */
  remove(hold: H): void {
    const owners = this.byKey.get(hold.key);
    if (!owners || owners.get(hold.owner) !== hold) return;
    let previous = hold.previous;
    while (previous && previous.count <= 0) previous = previous.previous;
    if (previous) owners.set(hold.owner, previous);
    else owners.delete(hold.owner);
    if (owners.size === 0) this.byKey.delete(hold.key);
  }

  /** Counts one unlock of a lost hold; forgets it once every acquisition is accounted for. */
  dropOne(hold: H): void {
    hold.count--;
    // An older generation (not current) with no counts left is skipped when the
    // current one is removed.
    if (hold.count <= 0) this.remove(hold);
  }

  /** Keeps a background operation (an undo) in view until it settles, for close(). */
  track(operation: Promise<unknown>): void {
    this.background.add(operation);
    const forget = () => this.background.delete(operation);
    operation.then(forget, forget);
  }

  /** The operations still in flight, chained or in the background (close() waits for them). */
  inFlight(): Promise<unknown>[] {
    return [...this.chains.values(), ...this.background];
  }

  /** Every hold of `key` (all owners of this client). */
  holdsOf(key: string): H[] {
    return [...(this.byKey.get(key)?.values() ?? [])];
  }

  all(): H[] {
    const result: H[] = [];
    for (const owners of this.byKey.values()) result.push(...owners.values());
    return result;
  }

  /** Runs `operation` after every earlier operation of `owner` on `key` settled. */
  serialize<T>(key: string, owner: string, operation: () => Promise<T>): Promise<T> {
    const id = `${key}\u0000${owner}`;
    const before = this.chains.get(id);
    const run = before ? before.then(operation, operation) : operation();
    this.chains.set(id, run);
    // Forget the chain once its last operation settled (the common case: one at a time).
    const forget = () => {
      if (this.chains.get(id) === run) this.chains.delete(id);
    };
    run.then(forget, forget);
    return run;
  }
}
