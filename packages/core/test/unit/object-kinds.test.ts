import { kindOf, type KindReading } from '../../src/client/inspector.js';
import { RLockClient } from '../../src/client/rlock-client.js';
import { OBJECT_KINDS, type ObjectKind } from '../../src/client/inspect-types.js';
import { COMPOSITE_KINDS, KINDS, type AnyComposite, type AnyKind } from '../../src/objects/kinds.js';
import type { KeyRead, KeyType } from '../../src/objects/inspect/snapshot.js';

const absent: KeyRead = { type: 'none', pttl: -2, value: null, fields: {}, items: [], live: 0, lapsed: 0, entries: [] };

/** What each kind makes of an object whose keys (by suffix: '' is the main key) read as given; every other key absent. */
function readings(reads: Record<string, Partial<KeyRead> & { type: KeyType }>): KindReading[] {
  const main = 'rlock:{x}';
  return KINDS.map((kind) => {
    const layout = kind.keeps('rlock', 'x') as Record<string, { key: string }>;
    const keys = Object.fromEntries(
      Object.entries(layout).map(([part, { key }]) => [
        part,
        { ...absent, ...(reads[key.slice(main.length)] && { pttl: 5_000, ...reads[key.slice(main.length)] }) },
      ]),
    );
    const snapshot = { now: 1_000, keys };
    return { kind, snapshot, recognition: kind.recognise(snapshot as never) };
  });
}

const read = (reads: Record<string, Partial<KeyRead> & { type: KeyType }>, hint?: ObjectKind): string | undefined => kindOf(readings(reads), hint)?.kind.name;

describe('the kinds registry', () => {
  it('lists every kind once, with a description, and inspect accepts each as a hint', () => {
    expect(new Set(OBJECT_KINDS).size).toBe(OBJECT_KINDS.length);
    expect(OBJECT_KINDS).toEqual(expect.arrayContaining(['lock', 'fairLock', 'readWriteLock', 'semaphore', 'nonReentrantLock']));
    for (const kind of KINDS) expect(kind.description).toMatch(/\S/);
  });

  it("names a client method that makes the kind's objects", () => {
    // The type check: a kind whose method the client lacks, or types otherwise, does not compile.
    type KindMethods = { [Kind in AnyKind as Kind['method']]: ReturnType<Kind['getter']> };
    const methods = RLockClient.prototype satisfies KindMethods;
    for (const kind of KINDS) expect(typeof methods[kind.method]).toBe('function');
  });

  it('lists every composite kind once, apart from the registered kinds, each with a client method that makes its objects', () => {
    const names = [...KINDS, ...COMPOSITE_KINDS].map((kind) => kind.name);
    expect(new Set(names).size).toBe(names.length);
    // The type check, as for the registered kinds.
    type CompositeMethods = { [Kind in AnyComposite as Kind['method']]: ReturnType<Kind['getter']> };
    const methods = RLockClient.prototype satisfies CompositeMethods;
    for (const kind of COMPOSITE_KINDS) {
      expect(kind.description).toMatch(/\S/);
      expect(typeof methods[kind.method]).toBe('function');
      // No keys of its own: inspect tells only registered kinds apart.
      expect(OBJECT_KINDS).not.toContain(kind.name);
    }
  });

  it('keeps every key of an object under its hash tag, and reads a key by another only by one it reads whole', () => {
    for (const kind of KINDS) {
      const kept = Object.values(kind.keeps('rlock', 'order:42') as Record<string, { key: string; by?: string }>);
      for (const { key, by } of kept) {
        expect(key).toMatch(/^rlock:\{order:42\}(:[a-z]+)?$/);
        if (by !== undefined) expect(kept.some((other) => other.key === by && other.by === undefined)).toBe(true);
      }
    }
  });

  describe('kindOf', () => {
    const lockHold = { '': { type: 'hash' as const, fields: { 'c:t': '1', t: '7', o: '1' } } };

    it('reads a marked hold as a non-reentrant lock, or as a non-reentrant fair lock when told so', () => {
      const onceHold = { '': { type: 'hash' as const, fields: { 'c:t': '1', t: '7', o: '1', n: '1' } } };
      expect(read(onceHold)).toBe('nonReentrantLock');
      expect(read(onceHold, 'nonReentrantFairLock')).toBe('nonReentrantFairLock');
      expect(read(onceHold, 'fairLock')).toBe('nonReentrantLock');
      // Free with waiters queued: a fair lock's queue, unless told which fair lock.
      const queued = { ':queue': { type: 'list' as const }, ':waiters': { type: 'zset' as const } };
      expect(read(queued)).toBe('fairLock');
      expect(read(queued, 'nonReentrantFairLock')).toBe('nonReentrantFairLock');
    });

    it('reads a hold as a lock, or as a fair lock when told so, but never as a kind whose keys it lacks', () => {
      expect(read(lockHold)).toBe('lock');
      expect(read(lockHold, 'fairLock')).toBe('fairLock');
      expect(read(lockHold, 'semaphore')).toBe('lock');
    });

    it('lets a layout that shows its kind win over the hint', () => {
      expect(read({ '': { type: 'hash', fields: { 'c:t': '1', t: '7', o: '1', n: '1' } } }, 'lock')).toBe('nonReentrantLock');
      expect(read({ ...lockHold, ':queue': { type: 'list' }, ':waiters': { type: 'zset' } }, 'lock')).toBe('fairLock');
      const onceHold = { '': { type: 'hash' as const, fields: { 'c:t': '1', t: '7', o: '1', n: '1' } } };
      expect(read({ ...onceHold, ':queue': { type: 'list' }, ':waiters': { type: 'zset' } }, 'nonReentrantLock')).toBe('nonReentrantFairLock');
      expect(read({ '': { type: 'hash', fields: { mode: 'read' } } }, 'lock')).toBe('readWriteLock');
      expect(read({ '': { type: 'string', value: '2' }, ':leases': { type: 'zset' } }, 'semaphore')).toBe('permitExpirableSemaphore');
      expect(read({ '': { type: 'string', value: 'c:t|op' } })).toBe('lock');
    });

    it('leaves a bare integer undecided unless told which kind keeps it', () => {
      const integer = { '': { type: 'string' as const, value: '3' } };
      expect(read(integer)).toBeUndefined();
      expect(read(integer, 'countDownLatch')).toBe('countDownLatch');
      expect(read(integer, 'lock')).toBeUndefined();
    });

    it('recognises no kind in a key none of them keeps', () => {
      expect(read({})).toBeUndefined();
      expect(read({ '': { type: 'hash', fields: { count: '1' } } })).toBeUndefined();
      expect(read({ '': { type: 'hash', fields: { owner: 'c:t', count: '1', token: '7' } } })).toBeUndefined();
      // A hash is a hold only with one owner's count and a token, every field as hold-record.lua writes it.
      expect(read({ '': { type: 'hash', fields: { 'c:t': '1' } } })).toBeUndefined();
      expect(read({ '': { type: 'hash', fields: { 'c:t': '1', 'd:t': '1', t: '7' } } })).toBeUndefined();
      expect(read({ '': { type: 'hash', fields: { 'c:t': 'x', t: '7' } } })).toBeUndefined();
      expect(read({ '': { type: 'hash', fields: { 'c:t': '1', t: '7', extra: '1' } } })).toBeUndefined();
      // A string is no hold: the layout-5 record reads as nothing (a Redlock lease lock aside).
      expect(read({ '': { type: 'string', value: '1 7 c:t' } })).toBeUndefined();
      expect(read({ '': { type: 'list' } })).toBeUndefined();
    });
  });
});
