import { describe, expect, it } from '@jest/globals';
import { OwnerChains } from '../../src/engine/owner-chains.js';

/** Settles pending reactions, so a turn handed over has run its continuation. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('OwnerChains', () => {
  it('runs one owner’s operations on a key one at a time, in call order', async () => {
    const chains = new OwnerChains();
    const order: string[] = [];
    expect(chains.enter('k', 'a')).toBeUndefined();
    const second = chains.enter('k', 'a');
    const third = chains.enter('k', 'a');
    void second?.then(() => order.push('second'));
    void third?.then(() => order.push('third'));
    await flush();
    expect(order).toEqual([]);
    chains.leave('k', 'a');
    await flush();
    expect(order).toEqual(['second']);
    chains.leave('k', 'a');
    await flush();
    expect(order).toEqual(['second', 'third']);
    chains.leave('k', 'a');
    expect(chains.busy('k', 'a')).toBe(false);
  });

  it('keeps other owners of the same key apart, before and after the key holds several', async () => {
    const chains = new OwnerChains();
    expect(chains.enter('k', 'a')).toBeUndefined();
    // A second owner is not behind the first: its turn is its own.
    expect(chains.enter('k', 'b')).toBeUndefined();
    let aNext = false;
    void chains.enter('k', 'a')?.then(() => (aNext = true));
    chains.leave('k', 'b');
    await flush();
    expect(aNext).toBe(false);
    expect(chains.busy('k', 'b')).toBe(false);
    chains.leave('k', 'a');
    await flush();
    expect(aNext).toBe(true);
    // A third owner joins while a keeps its turn; leaving in any order frees the key.
    expect(chains.enter('k', 'c')).toBeUndefined();
    chains.leave('k', 'a');
    expect(chains.busy('k', 'a')).toBe(false);
    expect(chains.busy('k', 'c')).toBe(true);
    chains.leave('k', 'c');
    expect(chains.busy('k', 'c')).toBe(false);
    await expect(chains.idle()).resolves.toBeUndefined();
  });

  it('keeps an owner’s line in order when other owners join the key, and forms a line among several owners', async () => {
    const chains = new OwnerChains();
    const order: string[] = [];
    // a's line forms while a is alone on the key, then b arrives: a's line stays a's.
    expect(chains.enter('k', 'a')).toBeUndefined();
    void chains.enter('k', 'a')?.then(() => order.push('a2'));
    expect(chains.enter('k', 'b')).toBeUndefined();
    // b's line forms among several owners.
    void chains.enter('k', 'b')?.then(() => order.push('b2'));
    void chains.enter('k', 'b')?.then(() => order.push('b3'));
    await flush();
    expect(order).toEqual([]);
    chains.leave('k', 'b');
    await flush();
    expect(order).toEqual(['b2']);
    chains.leave('k', 'a');
    await flush();
    expect(order).toEqual(['b2', 'a2']);
    chains.leave('k', 'a');
    expect(chains.busy('k', 'a')).toBe(false);
    chains.leave('k', 'b');
    await flush();
    expect(order).toEqual(['b2', 'a2', 'b3']);
    chains.leave('k', 'b');
    expect(chains.busy('k', 'b')).toBe(false);
    await expect(chains.idle()).resolves.toBeUndefined();
  });

  it('ignores a leave without a turn, and resolves idle() once the last turn ends', async () => {
    const chains = new OwnerChains();
    chains.leave('k', 'a');
    expect(chains.enter('k', 'a')).toBeUndefined();
    chains.leave('k', 'b');
    expect(chains.busy('k', 'a')).toBe(true);
    let idle = false;
    void chains.idle().then(() => (idle = true));
    await flush();
    expect(idle).toBe(false);
    chains.leave('k', 'a');
    await flush();
    expect(idle).toBe(true);
  });
});
