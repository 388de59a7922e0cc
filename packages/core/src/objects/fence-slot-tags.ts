import calculateSlot from 'cluster-key-slot';

const SLOTS = 16384;

/**
 * The smallest decimal string hashing to each Cluster slot, found lazily: the
 * scan stops at the slot asked for and remembers those it passed, so a first
 * lock does not block the event loop for the whole table (about 110,000 CRC16s).
 * Kept as numbers (64 KB once full): a string per slot was ~0.5 MB, which a
 * client working on a few thousand names fills.
 */
class SlotTagMemo {
  /** Each slot's tag plus one; 0 while not found yet. */
  private readonly tags = new Int32Array(SLOTS);
  /** The next decimal string to hash: every smaller one's slot already has its tag. */
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

// One per process on purpose: it memoizes a pure function (a slot's tag never
// changes), so clients sharing it see the same answers and scan only once.
const SLOT_TAGS = new SlotTagMemo();

/** The smallest decimal string hashing to `slot` (the same in every process and version): the fence counter's tag. */
export function fenceTagForSlot(slot: number): string {
  if (!Number.isInteger(slot) || slot < 0 || slot >= SLOTS) throw new RangeError(`slot out of range: ${slot}`);
  return SLOT_TAGS.tagFor(slot);
}
