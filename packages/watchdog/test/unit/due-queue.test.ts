import { describe, expect, it } from '@jest/globals';
import { DueQueue, type DueItem } from '../../src/due-queue.js';

interface Item extends DueItem {
  readonly id: number;
}

function item(id: number): Item {
  return { id, dueAt: 0, queueIndex: -1 };
}

/** A tiny deterministic PRNG, so a failure replays. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('DueQueue', () => {
  it('pops items in due order', () => {
    const queue = new DueQueue<Item>();
    const dues = [50, 10, 40, 10, 30, 20];
    dues.forEach((dueAt, id) => queue.schedule(item(id), dueAt));
    const popped: number[] = [];
    for (let next = queue.pop(); next !== undefined; next = queue.pop()) popped.push(next.dueAt);
    expect(popped).toEqual([10, 10, 20, 30, 40, 50]);
    expect(queue.size).toBe(0);
  });

  it('moves a queued item when scheduled again, either way', () => {
    const queue = new DueQueue<Item>();
    const [a, b, c] = [item(1), item(2), item(3)];
    queue.schedule(a, 10);
    queue.schedule(b, 20);
    queue.schedule(c, 30);
    queue.schedule(c, 5);
    expect(queue.peek()).toBe(c);
    queue.schedule(c, 25);
    queue.schedule(a, 40);
    expect([queue.pop(), queue.pop(), queue.pop()]).toEqual([b, c, a]);
    expect(queue.size).toBe(0);
  });

  it('removes any item, and says whether it was queued', () => {
    const queue = new DueQueue<Item>();
    const items = [1, 2, 3, 4, 5].map(item);
    items.forEach((it, i) => queue.schedule(it, i));
    expect(queue.remove(items[2] as Item)).toBe(true);
    expect(queue.remove(items[2] as Item)).toBe(false);
    expect((items[2] as Item).queueIndex).toBe(-1);
    expect(queue.remove(items[0] as Item)).toBe(true);
    expect([queue.pop(), queue.pop(), queue.pop()].map((it) => it?.id)).toEqual([2, 4, 5]);
  });

  it('marks every item unqueued on clear', () => {
    const queue = new DueQueue<Item>();
    const items = [1, 2, 3].map(item);
    items.forEach((it, i) => queue.schedule(it, i));
    queue.clear();
    expect(queue.size).toBe(0);
    expect(queue.peek()).toBeUndefined();
    expect(items.map((it) => it.queueIndex)).toEqual([-1, -1, -1]);
    expect(queue.remove(items[0] as Item)).toBe(false);
  });

  it('agrees with a sorted list under a random mix of operations', () => {
    const random = lcg(42);
    const queue = new DueQueue<Item>();
    const model = new Map<Item, number>();
    const pool = Array.from({ length: 200 }, (_, id) => item(id));
    for (let step = 0; step < 20_000; step++) {
      const chosen = pool[Math.floor(random() * pool.length)] as Item;
      const op = random();
      if (op < 0.5) {
        const dueAt = Math.floor(random() * 1_000);
        queue.schedule(chosen, dueAt);
        model.set(chosen, dueAt);
      } else if (op < 0.75) {
        expect(queue.remove(chosen)).toBe(model.delete(chosen));
      } else {
        const popped = queue.pop();
        const least = Math.min(...model.values());
        if (model.size === 0) {
          expect(popped).toBeUndefined();
        } else {
          expect(popped?.dueAt).toBe(least);
          model.delete(popped as Item);
        }
      }
      expect(queue.size).toBe(model.size);
    }
  });
});
