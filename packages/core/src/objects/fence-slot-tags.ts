import calculateSlot from 'cluster-key-slot';

const SLOTS = 16384;

/**
 * The smallest decimal string hashing to each Cluster slot, found lazily: the
 * scan stops at the slot asked for and remembers those it passed, so a first
 * lock does not block the event loop for the whole table (about 110,000 CRC16s).
 */
class SlotTagMemo {
  private readonly tags = new Array<string | undefined>(SLOTS);
  /** The next decimal string to hash: every smaller one's slot already has its tag. */
  private scanned = 0;

  tagFor(slot: number): string {
    let tag = this.tags[slot];
    while (tag === undefined) {
      const candidate = String(this.scanned++);
      this.tags[calculateSlot(candidate)] ??= candidate;
      tag = this.tags[slot];
    }
    return tag;
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
