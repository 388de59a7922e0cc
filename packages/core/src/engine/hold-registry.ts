import { endingTasksRun } from '../tasks/task-end.js';
import type { Hold } from './hold.js';

/** The holds of one key when there is more than one: per mode, per owner. */
type Shared = Map<string, Map<string, Hold>>;

/** Holds by key, mode and owner (a key with one hold maps to it directly); lost ones hang off `previous`, so their unlocks answer with the loss. */
export class HoldRegistry {
  private readonly byKey = new Map<string, Hold | Shared>();
  /** Holds by owner, so a task's end looks at its own; indexed only while a task heard ending runs: no other hold's task can end. */
  private readonly byOwner = new Map<string, Hold | Hold[]>();

  current(key: string, mode: string, owner: string): Hold | undefined {
    const entry = this.byKey.get(key);
    if (entry === undefined) return undefined;
    if (entry instanceof Map) return entry.get(mode)?.get(owner);
    return entry.mode === mode && entry.owner === owner ? entry : undefined;
  }

  /** Makes `hold` the owner's current generation. */
  set(hold: Hold): void {
    const replaced = this.current(hold.key, hold.mode, hold.owner);
    // A replaced generation stays indexed only while the new one may restore it.
    if (replaced !== undefined && replaced !== hold && hold.previous !== replaced) this.dropOwned(replaced);
    this.addOwned(hold);
    const entry = this.byKey.get(hold.key);
    if (entry === undefined || (!(entry instanceof Map) && entry.mode === hold.mode && entry.owner === hold.owner)) {
      this.byKey.set(hold.key, hold);
      return;
    }
    const shared: Shared = entry instanceof Map ? entry : new Map([[entry.mode, new Map([[entry.owner, entry]])]]);
    this.byKey.set(hold.key, shared);
    shared.set(hold.mode, (shared.get(hold.mode) ?? new Map<string, Hold>()).set(hold.owner, hold));
  }

  /** Forgets `hold` (its count reached 0), restoring an older generation with counts left. */
  remove(hold: Hold): void {
    this.dropOwned(hold);
    if (this.current(hold.key, hold.mode, hold.owner) !== hold) return;
    let previous = hold.previous;
    while (previous && previous.count <= 0) previous = previous.previous;
    if (previous) return this.set(previous);
    const entry = this.byKey.get(hold.key);
    if (!(entry instanceof Map)) {
      this.byKey.delete(hold.key);
      return;
    }
    const owners = entry.get(hold.mode) as Map<string, Hold>;
    owners.delete(hold.owner);
    if (owners.size === 0) entry.delete(hold.mode);
    if (entry.size === 0) this.byKey.delete(hold.key);
  }

  /** Counts one unlock of a lost hold; forgets it once every acquisition is accounted for. */
  dropOne(hold: Hold): void {
    // An older generation with no counts left is skipped when the current one is removed.
    if (--hold.count <= 0) this.remove(hold);
  }

  /** An exclusive mode was granted to `owner`: other owners' holds believed active ran out unseen (one mid final release is left to it). */
  loseOthers(key: string, mode: string, owner: string): void {
    const entry = this.byKey.get(key);
    // One hold of the key (the usual case) that is the owner's or of another mode: nothing to look through.
    if (entry === undefined || (!(entry instanceof Map) && (entry.mode !== mode || entry.owner === owner))) return;
    for (const other of this.holdsOf(key, mode)) {
      if (other.owner !== owner && other.active && !other.releaseSent) other.lose('expired');
    }
  }

  /** Every hold of `key` in `mode` (every owner of this client). */
  holdsOf(key: string, mode?: string): Hold[] {
    const entry = this.byKey.get(key);
    if (entry === undefined) return [];
    if (!(entry instanceof Map)) return mode === undefined || entry.mode === mode ? [entry] : [];
    if (mode !== undefined) return [...(entry.get(mode)?.values() ?? [])];
    return [...entry.values()].flatMap((owners) => [...owners.values()]);
  }

  /** The current holds of `owner`, forgetting the owner: its task ended, so no later lookup asks for it. */
  takeOwner(owner: string): Hold[] {
    const owned = this.byOwner.get(owner);
    if (owned === undefined) return [];
    this.byOwner.delete(owner);
    const holds = Array.isArray(owned) ? owned : [owned];
    return holds.filter((hold) => this.current(hold.key, hold.mode, hold.owner) === hold);
  }

  private addOwned(hold: Hold): void {
    if (!endingTasksRun()) return;
    const owned = this.byOwner.get(hold.owner);
    if (owned === undefined) this.byOwner.set(hold.owner, hold);
    else if (Array.isArray(owned)) {
      if (!owned.includes(hold)) owned.push(hold);
    } else if (owned !== hold) this.byOwner.set(hold.owner, [owned, hold]);
  }

  private dropOwned(hold: Hold): void {
    const owned = this.byOwner.get(hold.owner);
    if (owned === hold) this.byOwner.delete(hold.owner);
    else if (Array.isArray(owned)) {
      const at = owned.indexOf(hold);
      if (at !== -1) owned.splice(at, 1);
      if (owned.length === 0) this.byOwner.delete(hold.owner);
    }
  }

  all(): Hold[] {
    return [...this.byKey.keys()].flatMap((key) => this.holdsOf(key));
  }

  /** Keys with at least one hold (a count: after every release it is back to 0). */
  get size(): number {
    return this.byKey.size;
  }
}
