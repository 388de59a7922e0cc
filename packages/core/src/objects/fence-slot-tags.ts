import calculateSlot from 'cluster-key-slot';

const SLOTS = 16384;

/**
 * The smallest decimal string hashing to each Cluster slot, found lazily so a first lock does not block the event loop for
 * the whole table. Kept as numbers (each slot's tag plus one; 0 while not found yet), far smaller than a string per slot.
 * One per process: it memoizes a pure function, so clients share one scan.
 */
const TAGS = new Int32Array(SLOTS);
/** Every smaller decimal string's slot already has its tag. */
let scanned = 0;

/** The fence counter's tag: the same in every process and version. */
export function fenceTagForSlot(slot: number): string {
  if (!Number.isInteger(slot) || slot < 0 || slot >= SLOTS) throw new RangeError(`slot out of range: ${slot}`);
  while (TAGS[slot] === 0) {
    const candidate = scanned++;
    const at = calculateSlot(String(candidate));
    if (TAGS[at] === 0) TAGS[at] = candidate + 1;
  }
  return String((TAGS[slot] as number) - 1);
}
