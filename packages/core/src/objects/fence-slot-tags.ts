import calculateSlot from 'cluster-key-slot';

const SLOTS = 16384;

/**
 * The smallest decimal string hashing to each Cluster slot, found lazily so a first lock does not block the
 * event loop for the whole table. Kept as numbers, far smaller than a string per slot.
 */
class SlotTagMemo {
  /** Each slot's tag plus one; 0 while not found yet. */
  private readonly tags = new Int32Array(SLOTS);
  /** Every smaller decimal string's slot already has its tag. */
  private scanned = 0;

  tagFor(slot: number): string {
    const tags = this.tags;
    while (tags[slot] === 0) {
      const candidate = this.scanned++;
      const at = calculateSlot(String(candidate));
      if (tags[at] === 0) tags[at] = candidate + 1;
    }
    return String((tags[slot] as number) - 1);
  }
}

// One per process: it memoizes a pure function, so clients share one scan.
const SLOT_TAGS = new SlotTagMemo();

/** The fence counter's tag: the same in every process and version. */
export function fenceTagForSlot(slot: number): string {
  if (!Number.isInteger(slot) || slot < 0 || slot >= SLOTS) throw new RangeError(`slot out of range: ${slot}`);
  return SLOT_TAGS.tagFor(slot);
}
