import type { Hold } from './hold.js';

/**
 * The client's holds: per key, mode and owner, the current generation. Lost
 * generations with counts outstanding hang off `previous`, so their unlocks
 * answer with the loss instead of touching a newer hold. A task's read and
 * write holds on one name are two modes of one key: they never collide.
 */
export class HoldRegistry {
  private readonly byKey = new Map<string, Map<string, Map<string, Hold>>>();

  current(key: string, mode: string, owner: string): Hold | undefined {
    return this.byKey.get(key)?.get(mode)?.get(owner);
  }

  /** Makes `hold` the owner's current generation. */
  set(hold: Hold): void {
    let modes = this.byKey.get(hold.key);
    if (!modes) {
      modes = new Map();
      this.byKey.set(hold.key, modes);
    }
    let owners = modes.get(hold.mode);
    if (!owners) {
      owners = new Map();
      modes.set(hold.mode, owners);
    }
    owners.set(hold.owner, hold);
  }

  /** Forgets `hold` (its count reached 0), restoring an older generation with counts left. */
  remove(hold: Hold): void {
    const modes = this.byKey.get(hold.key);
    const owners = modes?.get(hold.mode);
    if (!modes || !owners || owners.get(hold.owner) !== hold) return;
    let previous = hold.previous;
    while (previous && previous.count <= 0) previous = previous.previous;
    if (previous) owners.set(hold.owner, previous);
    else owners.delete(hold.owner);
    if (owners.size === 0) modes.delete(hold.mode);
    if (modes.size === 0) this.byKey.delete(hold.key);
  }

  /** Counts one unlock of a lost hold; forgets it once every acquisition is accounted for. */
  dropOne(hold: Hold): void {
    hold.count--;
    // An older generation (not current) with no counts left is skipped when the
    // current one is removed.
    if (hold.count <= 0) this.remove(hold);
  }

  /**
   * An exclusive mode was just granted to `owner`: any other owner's hold this
   * client still believes active there is gone (its lease ran out unseen).
   * A hold whose final release is in flight is left to that release.
   */
  loseOthers(key: string, mode: string, owner: string): void {
    const owners = this.byKey.get(key)?.get(mode);
    if (!owners || owners.size === 0 || (owners.size === 1 && owners.has(owner))) return;
    for (const other of [...owners.values()]) {
      if (other.owner !== owner && other.active && !other.releaseSent) other.lose('expired');
    }
  }

  /** Every hold of `key` in `mode` (every owner of this client). */
  holdsOf(key: string, mode?: string): Hold[] {
    const modes = this.byKey.get(key);
    if (!modes) return [];
    if (mode !== undefined) return [...(modes.get(mode)?.values() ?? [])];
    const result: Hold[] = [];
    for (const owners of modes.values()) result.push(...owners.values());
    return result;
  }

  all(): Hold[] {
    const result: Hold[] = [];
    for (const modes of this.byKey.values()) for (const owners of modes.values()) result.push(...owners.values());
    return result;
  }
}
