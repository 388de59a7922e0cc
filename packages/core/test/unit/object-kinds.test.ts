import { kindOf } from '../../src/client/inspector.js';
import { OBJECT_KINDS, type ObjectKind } from '../../src/client/inspect-types.js';
import type { LayoutSnapshot } from '../../src/objects/inspect/snapshot.js';

type Types = LayoutSnapshot['types'];

/** A snapshot with the given key types and main hash fields or string value; every other key absent. */
function snapshot(types: Partial<Types>, main: Partial<LayoutSnapshot['fields']> | string = {}): LayoutSnapshot {
  const none = { owner: null, count: null, token: null, mode: null, w: null, wc: null, wt: null, kind: null };
  return {
    now: 1_000,
    types: { main: 'none', queue: 'none', waiters: 'none', readers: 'none', writers: 'none', leases: 'none', holders: 'none', ...types },
    mainPttl: 5_000,
    fields: typeof main === 'string' ? none : { ...none, ...main },
    value: typeof main === 'string' ? main : null,
    queue: [0],
    readers: [0],
    writers: [0],
    permits: [0, 0],
  };
}

const read = (s: LayoutSnapshot, hint?: ObjectKind): string | undefined => kindOf(s, hint)?.name;

describe('the kinds registry', () => {
  it('lists every kind once, and inspect accepts each as a hint', () => {
    expect(new Set(OBJECT_KINDS).size).toBe(OBJECT_KINDS.length);
    expect(OBJECT_KINDS).toEqual(expect.arrayContaining(['lock', 'fairLock', 'readWriteLock', 'semaphore', 'nonReentrantLock']));
  });

  describe('kindOf', () => {
    const lockHash = snapshot({ main: 'hash' }, { owner: 'c:t', count: '1', token: '7' });

    it('reads an owner hash as a lock, or as a fair lock when told so, but never as a kind whose keys it lacks', () => {
      expect(read(lockHash)).toBe('lock');
      expect(read(lockHash, 'fairLock')).toBe('fairLock');
      expect(read(lockHash, 'semaphore')).toBe('lock');
    });

    it('lets a layout that shows its kind win over the hint', () => {
      expect(read(snapshot({ main: 'hash' }, { owner: 'c:t', kind: 'nonReentrantLock' }), 'lock')).toBe('nonReentrantLock');
      expect(read(snapshot({ main: 'hash', queue: 'list', waiters: 'zset' }, { owner: 'c:t' }), 'lock')).toBe('fairLock');
      expect(read(snapshot({ main: 'hash' }, { mode: 'read' }), 'lock')).toBe('readWriteLock');
      expect(read(snapshot({ main: 'string', leases: 'zset' }, '2'), 'semaphore')).toBe('permitExpirableSemaphore');
      expect(read(snapshot({ main: 'string' }, 'c:t|op'))).toBe('lock');
    });

    it('leaves a bare integer undecided unless told which kind keeps it', () => {
      const integer = snapshot({ main: 'string' }, '3');
      expect(read(integer)).toBeUndefined();
      expect(read(integer, 'countDownLatch')).toBe('countDownLatch');
      expect(read(integer, 'lock')).toBeUndefined();
    });

    it('recognises no kind in a key none of them keeps', () => {
      expect(read(snapshot({}))).toBeUndefined();
      expect(read(snapshot({ main: 'hash' }, { count: '1' }))).toBeUndefined();
      expect(read(snapshot({ main: 'list' }))).toBeUndefined();
    });
  });
});
