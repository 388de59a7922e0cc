import {
  classifyLoss,
  decideAcquire,
  decideLocked,
  decideRenewal,
  expiryWaitMs,
  rankOf,
  quarantineEnds,
  quorumOf,
  quorumOwnerPttl,
  quorumPttl,
  releasesNeeded,
  toleratedFailures,
  validityMs,
} from '../../src/quorum.js';

describe('Redlock quorum arithmetic', () => {
  describe('quorumOf', () => {
    it.each([
      [1, 1, 0],
      [2, 2, 0],
      [3, 2, 1],
      [4, 3, 1],
      [5, 3, 2],
      [7, 4, 3],
    ])('needs a strict majority of %i masters: %i, tolerating %i failures', (n, quorum, tolerated) => {
      expect(quorumOf(n)).toBe(quorum);
      expect(toleratedFailures(n)).toBe(tolerated);
    });

    it('makes any two majorities share a master', () => {
      for (let n = 1; n <= 9; n++) expect(2 * quorumOf(n)).toBeGreaterThan(n);
    });
  });

  describe('validity', () => {
    it('is lease − elapsed − drift', () => {
      expect(validityMs(10_000, 40, 0.01)).toBe(10_000 - 40 - 102);
      expect(validityMs(100, 97, 0.01)).toBe(0);
      expect(validityMs(100, 98, 0.01)).toBeLessThan(0);
      expect(validityMs(100, 96.5, 0.01)).toBeCloseTo(0.5, 10);
    });

    it('allows a drift of lease × driftFactor + 2 ms', () => {
      expect(validityMs(30_000, 0, 0)).toBe(30_000 - 2);
    });
  });

  describe('decideAcquire', () => {
    it('acquires with a majority and validity left', () => {
      expect(decideAcquire({ granted: 3, refused: 0, failed: 2 }, 5, 10)).toBe('acquired');
      expect(decideAcquire({ granted: 5, refused: 0, failed: 0 }, 5, 1)).toBe('acquired');
    });

    it('does not acquire a majority that came too late', () => {
      expect(decideAcquire({ granted: 5, refused: 0, failed: 0 }, 5, 0)).toBe('not-acquired');
      expect(decideAcquire({ granted: 3, refused: 2, failed: 0 }, 5, -3)).toBe('not-acquired');
    });

    it('does not acquire without a majority', () => {
      expect(decideAcquire({ granted: 2, refused: 3, failed: 0 }, 5, 100)).toBe('not-acquired');
      expect(decideAcquire({ granted: 1, refused: 2, failed: 2 }, 5, 100)).toBe('not-acquired');
    });

    it('reports no quorum as soon as more than N − Q masters failed', () => {
      expect(decideAcquire({ granted: 2, refused: 0, failed: 3 }, 5, 100)).toBe('no-quorum');
      expect(decideAcquire({ granted: 1, refused: 0, failed: 2 }, 3, 100)).toBe('no-quorum');
      expect(decideAcquire({ granted: 0, refused: 0, failed: 1 }, 1, 100)).toBe('no-quorum');
    });
  });

  describe('classifyLoss', () => {
    it('sees one owner on a majority as a holder to wait for', () => {
      expect(classifyLoss(['a', 'a', 'a'], 5)).toBe('held');
      expect(classifyLoss(['a', 'b', 'a', 'a'], 5)).toBe('held');
    });

    it('sees split votes and unknown owners as a split', () => {
      expect(classifyLoss(['a', 'a', 'b', 'b', 'c'], 5)).toBe('split');
      expect(classifyLoss(['a', 'a', undefined], 5)).toBe('split');
      expect(classifyLoss([], 5)).toBe('split');
    });
  });

  describe('quarantineEnds', () => {
    const run = (startedAt: number, restarted = false) => ({ startedAt, restarted });

    it('lets masters that started together vote at once: a fresh fleet forgot nothing', () => {
      expect(quarantineEnds([run(10_000), run(10_400), run(11_900)], 30_000, 2_000)).toEqual([0, 0, 0]);
    });

    it("keeps young masters out while another master's run is unknown: it may be older (a client started after a restart)", () => {
      expect(quarantineEnds([run(10_000), run(10_400), run(11_900), undefined], 30_000, 2_000)).toEqual([40_000, 40_400, 41_900, 0]);
      // Old masters vote: their quarantine ended long ago.
      expect(quarantineEnds([run(0), undefined, run(50_000)], 30_000, 2_000)).toEqual([30_000, 0, 80_000]);
    });

    it('keeps a master out for the quarantine from its start when another started at least 2 s before it', () => {
      expect(quarantineEnds([run(0), run(0), run(5_000)], 30_000, 2_000)).toEqual([0, 0, 35_000]);
      // A master known only from before it went down still dates the fleet.
      expect(quarantineEnds([run(0), run(2_000), run(1_000)], 3_000, 2_000)).toEqual([0, 5_000, 0]);
    });

    it('keeps out a master seen to restart (its run_id changed), even when every master restarted', () => {
      expect(quarantineEnds([run(7_000, true), run(7_000, true), run(7_000)], 30_000, 2_000)).toEqual([37_000, 37_000, 0]);
    });

    it('is over at once with a quarantine of 0 (turned off)', () => {
      expect(quarantineEnds([run(0), run(9_000, true)], 0, 2_000)).toEqual([0, 9_000]);
    });
  });

  describe('rankOf', () => {
    const ids = ['a1', 'b2', 'c3', 'd4', 'e5'];
    const gateOf = (runIds: readonly (string | undefined)[], key: string): number | undefined => rankOf(runIds, key)[0];

    it('ranks the voting masters alike for a key whatever the order they are listed in', () => {
      for (const key of ['rlock:{x}', 'rlock:{y}', 'p:{order:42}']) {
        const reversed = [...ids].reverse();
        expect(rankOf(reversed, key).map((index) => reversed[index])).toEqual(rankOf(ids, key).map((index) => ids[index]));
        expect(new Set(rankOf(ids, key)).size).toBe(5);
      }
    });

    it('leaves out masters that do not vote', () => {
      expect(rankOf(['a1', undefined, 'c3'], 'k').sort()).toEqual([0, 2]);
      expect(rankOf([undefined, undefined], 'k')).toEqual([]);
    });

    it('moves only the keys whose gate stopped voting, and spreads gates and first majorities over the masters', () => {
      const keys = Array.from({ length: 200 }, (_, i) => `p:{k${i}}`);
      const gates = keys.map((key) => gateOf(ids, key) as number);
      expect(new Set(gates).size).toBe(5);
      const firstThree = keys.map((key) => rankOf(ids, key).slice(0, 3).sort().join());
      expect(new Set(firstThree).size).toBeGreaterThan(5);
      const without2 = ids.map((id, index) => (index === 2 ? undefined : id));
      keys.forEach((key, i) => {
        const moved = gateOf(without2, key);
        if (gates[i] !== 2) expect(moved).toBe(gates[i]);
        else expect(moved).not.toBe(2);
      });
    });
  });

  describe('releasesNeeded and expiryWaitMs', () => {
    it('needs Q minus the masters that were ours, at least one', () => {
      expect(releasesNeeded(0, 5)).toBe(3);
      expect(releasesNeeded(2, 5)).toBe(1);
      expect(releasesNeeded(3, 5)).toBe(1);
    });

    it('waits for the needed-th shortest TTL; a TTL of −1 never runs out', () => {
      expect(expiryWaitMs([500, 100, 300], 2)).toBe(300);
      expect(expiryWaitMs([500, -1, 300], 3)).toBe(Number.POSITIVE_INFINITY);
      expect(expiryWaitMs([500], 2)).toBe(Number.POSITIVE_INFINITY);
    });
  });

  describe('quorumPttl', () => {
    it('is the Q-th largest PTTL', () => {
      expect(quorumPttl([100, 900, 500, -2, 300], 3)).toBe(300);
      expect(quorumPttl([100, 900, 500], 2)).toBe(500);
    });

    it('is −2 when a majority is free and ranks −1 (no TTL) above every TTL', () => {
      expect(quorumPttl([100, -2, -2, -2, 900], 3)).toBe(-2);
      expect(quorumPttl([-1, -1, -1, 5, 5], 3)).toBe(-1);
      expect(quorumPttl([-1, -1, 7, 5, 5], 3)).toBe(7);
    });
  });

  describe('decideLocked', () => {
    it('is true as soon as one owner shows on a majority', () => {
      expect(decideLocked(['a', 'a', 'a'], 2, 5)).toBe(true);
      expect(decideLocked(['a', 'b', 'a', undefined, 'a'], 0, 5)).toBe(true);
    });

    it('counts per owner: partial grants of different owners on a majority are not a lock', () => {
      expect(decideLocked(['a', 'a', 'b', 'b', undefined], 0, 5)).toBe(false);
      expect(decideLocked(['a', 'b', undefined], 0, 3)).toBe(false);
    });

    it('stays open while the masters not known yet could still make a majority for someone', () => {
      expect(decideLocked(['a', 'a'], 3, 5)).toBeUndefined();
      expect(decideLocked(['a', 'b', undefined], 2, 5)).toBeUndefined(); // a or b could reach 3
      expect(decideLocked(['a', 'b', undefined, undefined], 1, 5)).toBe(false);
      expect(decideLocked([], 2, 3)).toBeUndefined();
      expect(decideLocked([undefined, undefined], 1, 3)).toBe(false);
    });
  });

  describe('quorumOwnerPttl', () => {
    const read = (owner: string | undefined, pttlMs: number) => ({ owner, pttlMs });

    it("is the Q-th largest TTL among the keys of the owner holding a majority, never another owner's", () => {
      const reads = [read('a', 10_000), read('a', 20_000), read('a', 30_000), read('b', 60_000), read(undefined, -2)];
      expect(quorumOwnerPttl(reads, 3)).toBe(10_000);
    });

    it('is −2 when no owner holds a majority, even if keys exist on a majority', () => {
      const reads = [read('a', 30_000), read('a', 30_000), read('b', 30_000), read('b', 30_000), read(undefined, -2)];
      expect(quorumOwnerPttl(reads, 3)).toBe(-2);
      expect(quorumOwnerPttl([], 2)).toBe(-2);
    });

    it('ranks −1 (no TTL) above every TTL', () => {
      expect(quorumOwnerPttl([read('a', -1), read('a', -1), read('a', 7)], 2)).toBe(-1);
      expect(quorumOwnerPttl([read('a', -1), read('a', 7), read('b', -1)], 2)).toBe(7);
    });
  });

  describe('decideRenewal', () => {
    const tally = { holding: 5, renewed: 0, gone: 0, taken: 0, failed: 0, pending: 0 };

    it('keeps the hold when a majority of all masters renewed it', () => {
      expect(decideRenewal({ ...tally, renewed: 3, failed: 2 }, 5)).toBe('renewed');
      expect(decideRenewal({ ...tally, holding: 3, renewed: 3 }, 5)).toBe('renewed');
    });

    it('loses it once fewer than Q masters can still have it', () => {
      expect(decideRenewal({ ...tally, renewed: 2, gone: 3 }, 5)).toBe('gone');
      expect(decideRenewal({ ...tally, renewed: 2, gone: 2, taken: 1 }, 5)).toBe('taken');
      expect(decideRenewal({ ...tally, holding: 3, renewed: 2, gone: 1 }, 5)).toBe('gone');
    });

    it('waits for answers, then leaves failures undecided', () => {
      expect(decideRenewal({ ...tally, renewed: 2, pending: 3 }, 5)).toBe('pending');
      expect(decideRenewal({ ...tally, renewed: 2, gone: 2, failed: 1 }, 5)).toBe('undecided');
    });
  });
});
