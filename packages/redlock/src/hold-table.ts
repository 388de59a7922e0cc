import type { RedlockHold } from './redlock-hold.js';

/**
 * The client's holds: per lock key, per owner, the current generation (older,
 * lost generations with counts still outstanding hang off `previous`). It also
 * runs the operations of one owner on one lock one after another: branches of
 * a `Promise.all` in one task share the owner, and without this two of them
 * could both send a first round and both count themselves as the first
 * acquisition.
 */
export class HoldTable {
  private readonly byKey = new Map<string, Map<string, RedlockHold>>();
  private readonly chains = new Map<string, Promise<unknown>>();

  current(key: string, owner: string): RedlockHold | undefined {
    return this.byKey.get(key)?.get(owner);
  }

  set(hold: RedlockHold): void {
    let owners = this.byKey.get(hold.key);
    if (!owners) {
      owners = new Map();
      this.byKey.set(hold.key, owners);
    }
    owners.set(hold.owner, hold);
  }

  /** Forgets `hold` (its count reached 0), restoring an older generation with counts left. */
  remove(hold: RedlockHold): void {
    const owners = this.byKey.get(hold.key);
    if (!owners || owners.get(hold.owner) !== hold) return;
    const previous = hold.previous;
    if (previous && previous.count > 0) owners.set(hold.owner, previous);
    else owners.delete(hold.owner);
    if (owners.size === 0) this.byKey.delete(hold.key);
  }

  /** Counts one unlock of a lost hold; forgets it once every acquisition is accounted for. */
  dropOne(hold: RedlockHold): void {
    hold.count--;
    if (hold.count <= 0) this.remove(hold);
  }

  holdsOf(key: string): RedlockHold[] {
    return [...(this.byKey.get(key)?.values() ?? [])];
  }

  all(): RedlockHold[] {
    const result: RedlockHold[] = [];
    for (const owners of this.byKey.values()) result.push(...owners.values());
    return result;
  }

  /** Runs `operation` after every earlier operation of `owner` on `key` settled. */
  serialize<T>(key: string, owner: string, operation: () => Promise<T>): Promise<T> {
    const id = `${key}\u0000${owner}`;
    const before = this.chains.get(id);
    const run = before ? before.then(operation, operation) : operation();
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.chains.set(id, settled);
    void settled.then(() => {
      if (this.chains.get(id) === settled) this.chains.delete(id);
    });
    return run;
  }
}
