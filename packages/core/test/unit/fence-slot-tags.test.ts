import calculateSlot from 'cluster-key-slot';
import { fenceTagForSlot } from '../../src/objects/fence-slot-tags.js';

/** The smallest decimal string in `slot`, found the slow way. */
function smallestIn(slot: number): string {
  for (let i = 0; ; i++) if (calculateSlot(String(i)) === slot) return String(i);
}

describe('fenceTagForSlot', () => {
  it('answers the smallest decimal string of each slot, whatever order slots are asked in', () => {
    // Asked high, low, then in between: the scan stops at each slot and resumes from there.
    const slots = [16383, 0, 8000, 1, 12182, 5061, 8000];
    for (const slot of slots) expect(fenceTagForSlot(slot)).toBe(smallestIn(slot));
  });

  it('gives every slot a tag in that slot, the same on every call', () => {
    for (let slot = 0; slot < 16384; slot++) {
      const tag = fenceTagForSlot(slot);
      expect(calculateSlot(tag)).toBe(slot);
      expect(fenceTagForSlot(slot)).toBe(tag);
    }
  });

  it.each([-1, 16384, 1.5, Number.NaN])('refuses slot %p', (slot) => {
    expect(() => fenceTagForSlot(slot)).toThrow(RangeError);
  });
});
