import calculateSlot from 'cluster-key-slot';

const SLOTS = 16384;
const tags = new Array<string | undefined>(SLOTS);
/** The next decimal string to hash: every smaller one's slot already has its tag. */
let scanned = 0;

/**
 * A short hash tag whose Cluster slot is `slot`. The fencing counter is shared per
 * slot, not per lock name: at most 16,384 counters however many names are used,
 * while the acquire script still touches one slot. Tags are the smallest decimal
 * strings found for each slot, so every process (and version) derives the same
 * names. The scan goes only as far as the slot asked for, remembering every
 * slot it passes: about 16,000 CRC16 computations (a few ms) for a process's
 * first slot on average, instead of the whole table (about 110,000, 60 ms of
 * a blocked event loop) on first use; all slots together never cost more.
 */
export function fenceTagForSlot(slot: number): string {
  if (!Number.isInteger(slot) || slot < 0 || slot >= SLOTS) throw new RangeError(`slot out of range: ${slot}`);
  let tag = tags[slot];
  while (tag === undefined) {
    const candidate = String(scanned++);
    const found = calculateSlot(candidate);
    tags[found] ??= candidate;
    tag = tags[slot];
  }
  return tag;
}
