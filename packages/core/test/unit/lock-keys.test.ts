import calculateSlot from 'cluster-key-slot';
import { KEY_CACHE_LIMIT, LockKeyCache, lockKeys } from '../../src/objects/lock/keys.js';
import { checkKeyPrefix, checkName } from '../../src/objects/names.js';
import { InvalidArgumentError } from '../../src/errors.js';

describe('lockKeys', () => {
  it('puts every key and the channel of a lock under the name as hash tag', () => {
    const keys = lockKeys('rlock', 'order:42');
    expect(keys.lock).toBe('rlock:{order:42}');
    expect(keys.released).toBe('rlock:{order:42}:released');
    expect(keys.channel).toBe('rlock:{order:42}:release');
    expect(keys.cancelled).toBe('rlock:{order:42}:cancelled');
  });

  it('names a fence counter in the same Cluster slot as the lock', () => {
    for (const name of ['a', 'order:42', 'ünïcode', 'x'.repeat(1024)]) {
      const keys = lockKeys('p', name);
      expect(calculateSlot(keys.fence)).toBe(calculateSlot(keys.lock));
      expect(keys.fence).toMatch(/^p:\{\d+\}:fence$/);
    }
  });
});

describe('LockKeyCache', () => {
  it('returns the same names for a name while cached, and keeps at most KEY_CACHE_LIMIT per source', () => {
    const cache = new LockKeyCache('p');
    const plain = { keysOf: lockKeys };
    const own = { keysOf: (prefix: string, name: string) => ({ ...lockKeys(prefix, name), lock: `${prefix}:own:{${name}}` }) };
    const first = cache.keysOf(plain, 'n0');
    expect(first).toEqual(lockKeys('p', 'n0'));
    expect(cache.keysOf(plain, 'n0')).toBe(first);
    expect(cache.keysOf(own, 'n0').lock).toBe('p:own:{n0}');
    for (let i = 1; i <= KEY_CACHE_LIMIT; i++) cache.keysOf(plain, `n${i}`);
    expect(cache.size).toBe(KEY_CACHE_LIMIT + 1);
    // The oldest name went first: built again, equal but not the same object.
    expect(cache.keysOf(plain, 'n0')).not.toBe(first);
    expect(cache.keysOf(plain, 'n0')).toEqual(first);
  });
});

describe('checkName', () => {
  it.each(['', 'a{b', 'a}b', 'x'.repeat(1025), 'é'.repeat(513), 42, undefined])('refuses %p', (name) => {
    expect(() => checkName(name)).toThrow(InvalidArgumentError);
  });

  it('accepts a name of exactly 1,024 bytes', () => {
    expect(checkName('x'.repeat(1024))).toHaveLength(1024);
  });
});

describe('checkKeyPrefix', () => {
  it.each(['', 'a{', '}', 7])('refuses %p', (prefix) => {
    expect(() => checkKeyPrefix(prefix)).toThrow(InvalidArgumentError);
  });
});
