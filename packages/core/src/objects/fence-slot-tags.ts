import calculateSlot from 'cluster-key-slot';

const SLOTS = 16384;
const tags = new Array<string | undefined>(SLOTS);
/** The next decimal string to hash: every smaller one's slot already has its tag. */
let scanned = 0;

/**
 * A short hash tag whose Cluster slot is `slot`: the fencing counter is per
 * slot, not per name (at most 16,384 counters; the acquire script still
 * touches one slot). Tags are the smallest decimal strings per slot, so every
 * process and version derives the same names. The scan stops at the slot
 * asked for, remembering those it passed, so a first lock does not block the
 * event loop for the whole table (about 110,000 CRC16s).
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
