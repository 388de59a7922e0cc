import calculateSlot from 'cluster-key-slot';

const SLOTS = 16384;
let tags: string[] | undefined;

/**
 * A short hash tag whose Cluster slot is `slot`. The fencing counter is shared per
 * slot, not per lock name: at most 16,384 counters however many names are used,
 * while the acquire script still touches one slot. Tags are the smallest decimal
 * strings found for each slot, so every process (and version) derives the same
 * names. Built once per process on first use (about 10^5 CRC16 computations).
 */
export function fenceTagForSlot(slot: number): string {
  if (!tags) tags = buildTags();
  const tag = tags[slot];
  if (tag === undefined) throw new RangeError(`slot out of range: ${slot}`);
  return tag;
}

function buildTags(): string[] {
  const table = new Array<string>(SLOTS);
  let missing = SLOTS;
  for (let i = 0; missing > 0; i++) {
    const candidate = String(i);
    const slot = calculateSlot(candidate);
    if (table[slot] === undefined) {
      table[slot] = candidate;
      missing--;
    }
  }
  return table;
}
