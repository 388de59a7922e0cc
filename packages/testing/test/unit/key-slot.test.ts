import { CLUSTER_SLOTS, keySlot } from '../../src/key-slot.js';

describe('keySlot', () => {
  // Expected values are what CLUSTER KEYSLOT of redis-server 7.0 answers.
  it.each([
    ['', 0],
    ['foo', 12182],
    ['123456789', 12739],
    ['{user1000}.following', 3443],
    ['{user1000}.followers', 3443],
    ['foo{}{bar}', 8363],
    ['foo{{bar}}zap', 4015],
    ['{a', 10276],
    ['a}b{c}', 7365],
  ])('puts %j in slot %i like CLUSTER KEYSLOT', (key, slot) => {
    expect(keySlot(key)).toBe(slot);
  });

  it('hashes only the hash tag, so keys sharing a tag share a slot', () => {
    expect(keySlot('{order:1}:lock')).toBe(keySlot('{order:1}:queue'));
    expect(keySlot('{order:1}:lock')).toBe(keySlot('order:1'));
  });

  it('takes bytes as well as strings', () => {
    expect(keySlot(Buffer.from('foo'))).toBe(12182);
    expect(keySlot('é')).toBe(keySlot(Buffer.from('é', 'utf8')));
  });

  it('stays within 0 … 16383', () => {
    for (let i = 0; i < 1_000; i += 1) {
      const slot = keySlot(`key:${i}`);
      expect(slot).toBeGreaterThanOrEqual(0);
      expect(slot).toBeLessThan(CLUSTER_SLOTS);
    }
  });
});
