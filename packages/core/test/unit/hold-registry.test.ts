import { Hold, HoldSites, type HoldObserver, type HoldTarget } from '../../src/engine/hold.js';
import { HoldRegistry } from '../../src/engine/hold-registry.js';
import { endingTaskStarted } from '../../src/tasks/task-end.js';
import { newTaskContext } from '../../src/tasks/task-context.js';

const observer: HoldObserver = {
  startRenewal: () => undefined,
  stopRenewal: () => undefined,
  lost: () => undefined,
  watchesLosses: () => false,
};

const sites = new HoldSites(observer);

function hold(key: string, mode: string, owner: string): Hold {
  const target: HoldTarget = { name: key, key, mode, kind: 'lock', owner, exclusive: mode !== 'read', driftFactor: 0.01 };
  const made = new Hold(target, '1', sites, undefined);
  made.acquired(1, undefined, 10_000, false);
  return made;
}

describe('HoldRegistry', () => {
  describe('set and current', () => {
    it('finds each hold by key, mode and owner, one or several per key', () => {
      const registry = new HoldRegistry();
      const alone = hold('a', '', 'o1');
      const reader1 = hold('b', 'read', 'o1');
      const reader2 = hold('b', 'read', 'o2');
      const writer = hold('b', 'write', 'o1');
      for (const made of [alone, reader1, reader2, writer]) registry.set(made);
      expect(registry.current('a', '', 'o1')).toBe(alone);
      expect(registry.current('a', '', 'o2')).toBeUndefined();
      expect(registry.current('a', 'read', 'o1')).toBeUndefined();
      expect(registry.current('b', 'read', 'o2')).toBe(reader2);
      expect(registry.current('b', 'write', 'o1')).toBe(writer);
      expect(registry.holdsOf('b', 'read')).toEqual([reader1, reader2]);
      expect(registry.holdsOf('b')).toHaveLength(3);
      expect(registry.all()).toHaveLength(4);
      expect(registry.size).toBe(2);
    });

    it('replaces the owner’s current generation in place', () => {
      const registry = new HoldRegistry();
      const first = hold('a', '', 'o1');
      const second = hold('a', '', 'o1');
      registry.set(first);
      registry.set(second);
      expect(registry.current('a', '', 'o1')).toBe(second);
      expect(registry.all()).toEqual([second]);
    });
  });

  describe('remove', () => {
    it('is empty once every hold is removed, whatever the order', () => {
      const registry = new HoldRegistry();
      const holds = [hold('a', '', 'o1'), hold('b', 'read', 'o1'), hold('b', 'read', 'o2'), hold('b', 'write', 'o3')];
      for (const made of holds) registry.set(made);
      for (const made of [holds[2], holds[0], holds[3], holds[1]] as Hold[]) registry.remove(made);
      expect(registry.size).toBe(0);
      expect(registry.all()).toEqual([]);
    });

    it('restores an older generation that still has counts, and ignores a hold that is not current', () => {
      const registry = new HoldRegistry();
      const older = hold('a', '', 'o1');
      const newer = hold('a', '', 'o1');
      newer.previous = older;
      registry.set(newer);
      registry.remove(older);
      expect(registry.current('a', '', 'o1')).toBe(newer);
      registry.remove(newer);
      expect(registry.current('a', '', 'o1')).toBe(older);
      older.count = 0;
      registry.dropOne(older);
      expect(registry.size).toBe(0);
    });
  });

  describe('takeOwner', () => {
    // Holds are indexed by owner only while a task that is heard ending runs (client.task(), taskMiddleware()).
    let taskEnds = (): void => undefined;
    beforeEach(() => (taskEnds = endingTaskStarted(newTaskContext(), 'task')));
    afterEach(() => taskEnds());

    it('gives the current holds of one owner once, and forgets the ones removed', () => {
      const registry = new HoldRegistry();
      const mine = [hold('a', '', 'o1'), hold('b', 'read', 'o1'), hold('c', '', 'o1')];
      const theirs = hold('b', 'read', 'o2');
      for (const made of [...mine, theirs]) registry.set(made);
      registry.remove(mine[2] as Hold);
      expect(registry.takeOwner('o1')).toEqual([mine[0], mine[1]]);
      expect(registry.takeOwner('o1')).toEqual([]);
      expect(registry.takeOwner('o2')).toEqual([theirs]);
      // The holds themselves stay: only the owner's index entry is gone.
      expect(registry.all()).toHaveLength(3);
    });

    it('follows an older generation back when the newer one goes', () => {
      const registry = new HoldRegistry();
      const older = hold('a', '', 'o1');
      const newer = hold('a', '', 'o1');
      registry.set(older);
      newer.previous = older;
      registry.set(newer);
      expect(registry.takeOwner('o1')).toEqual([newer]);
      registry.set(newer);
      registry.remove(newer);
      expect(registry.takeOwner('o1')).toEqual([older]);
    });

    it('indexes no hold taken while no task that is heard ending runs (its owner cannot end)', () => {
      const registry = new HoldRegistry();
      taskEnds();
      const outside = hold('a', '', 'o1');
      try {
        registry.set(outside);
      } finally {
        taskEnds = endingTaskStarted(newTaskContext(), 'task');
      }
      const inside = hold('b', '', 'o1');
      registry.set(inside);
      expect(registry.takeOwner('o1')).toEqual([inside]);
      expect(registry.all()).toEqual([outside, inside]);
      registry.remove(outside);
      expect(registry.size).toBe(1);
    });
  });

  describe('loseOthers', () => {
    it('loses the other owners’ holds in the mode, alone on the key or beside others', () => {
      const registry = new HoldRegistry();
      const alone = hold('a', '', 'o1');
      registry.set(alone);
      registry.loseOthers('a', '', 'o1');
      expect(alone.active).toBe(true);
      registry.loseOthers('a', '', 'o2');
      expect(alone.state).toBe('lost');
      const reader = hold('b', 'read', 'o1');
      const writer = hold('b', 'write', 'o1');
      registry.set(reader);
      registry.set(writer);
      registry.loseOthers('b', 'write', 'o2');
      expect([reader.active, writer.active]).toEqual([true, false]);
    });
  });
});

describe('Hold', () => {
  describe('renewed', () => {
    it('follows the acquisitions taken with a watchdog lease, nested past the bit stack', () => {
      const made = hold('a', '', 'o1');
      expect(made.renewed).toBe(false);
      // 1 fixed (above), then 40 nested: watchdog lease only at depth 35.
      for (let depth = 2; depth <= 41; depth++) made.acquired(depth, undefined, 10_000, depth === 35);
      expect(made.renewed).toBe(true);
      for (let remaining = 40; remaining >= 34; remaining--) {
        expect(made.renewed).toBe(true);
        made.releasedOne(remaining);
      }
      expect(made.renewed).toBe(false);
      made.acquired(35, undefined, 30_000, true);
      made.acquired(36, undefined, 10_000, false);
      expect(made.renewed).toBe(true);
      made.releasedOne(35);
      made.releasedOne(34);
      expect(made.renewed).toBe(false);
      for (let remaining = 33; remaining >= 0; remaining--) made.releasedOne(remaining);
      expect(made.state).toBe('released');
    });
  });
});
