import { describe, expect, it } from '@jest/globals';
import { fileURLToPath, pathToFileURL } from 'node:url';

// scripts/faults/check.mjs on synthetic histories: the verdict on whether a holder replaced while it was paused was told it lost.
const CHECKER = pathToFileURL(fileURLToPath(new URL('../../../../scripts/faults/check.mjs', import.meta.url))).href;

interface Event {
  w: string;
  t: number;
  e: string;
  [field: string]: unknown;
}
interface Cell {
  kind: string;
  fault: string;
  replaced: number;
  told: number;
  verdict: string;
  why: string[];
}
interface Checker {
  check: (history: {
    events: Event[];
    phases: { fault: string; topology: string; start: number; faultAt: number; heal: number; end: number; strictFifo: boolean }[];
    deaths: Map<string, number>;
    stores: Map<string, { v: number; writes: number }>;
    keysLeft: Map<string, string[]>;
    permits: number;
    target: number;
    names: Map<string, { kind: string; phase: string }>;
  }) => Cell[];
}

const { check } = (await import(CHECKER)) as Checker;

/** How the paused holder's hold ends: its signal's abort (ms after the fault, 0: none) and its release's error code. */
interface Ending {
  lostAt: number;
  releaseError?: string;
}

/**
 * One phase of `fault`: worker a enters a section of `kind` and is paused from 100 ms to 5100 ms; worker b takes the
 * object at 3200 ms (a's lease ran out) and leaves at 3300 ms; a resumes, its write is refused, and its release settles
 * as `ending` says. For the permit pool (2 permits), c holds the other permit throughout.
 */
function pausedHolder(kind: string, fault: string, ending: Ending): Cell {
  const p = fault;
  const section = (w: string, enter: number, exit: number, token: string, settled: Ending): Event[] => [
    { w, t: enter, e: 'enter', k: kind, p, token, mode: 'x', requested: enter - 1, first: false },
    { w, t: exit, e: 'exit', k: kind, p, enter, lost: settled.lostAt > 0 && settled.lostAt < exit ? settled.lostAt : 0, token, fence: 'refused', mode: 'x' },
    { w, t: exit + 5, e: 'settled', k: kind, p, enter, lostAt: settled.lostAt, releaseError: settled.releaseError },
  ];
  const events = [
    ...section('a', 50, 5_150, '1', ending),
    ...(kind === 'psem' ? section('c', 60, 5_900, '3', { lostAt: 0 }) : []),
    ...section('b', 3_200, 3_300, '2', { lostAt: 0 }),
  ].sort((x, y) => x.t - y.t);
  const cells = check({
    events,
    phases: [{ fault, topology: 'standalone', start: 0, faultAt: 100, heal: 5_100, end: 6_000, strictFifo: false }],
    deaths: new Map(),
    stores: new Map(),
    keysLeft: new Map(),
    permits: 2,
    target: 0,
    names: new Map(),
  });
  const cell = cells.find((candidate) => candidate.kind === kind);
  if (cell === undefined) throw new Error(`no cell for ${kind}`);
  return cell;
}

describe('scripts/faults/check.mjs: paused holders told they lost', () => {
  it.each(['lock', 'psem'])('fails a holder-stop cell whose replaced holder was never told (%s)', (kind) => {
    const cell = pausedHolder(kind, 'holder-stop', { lostAt: 0 });
    expect(cell.replaced).toBe(1);
    expect(cell.told).toBe(0);
    expect(cell.verdict).toBe('FAIL');
    expect(cell.why).toEqual(['1 of 1 paused holders never told they lost']);
  });

  it('passes a holder told by its signal, even after its section ended (during the release)', () => {
    const cell = pausedHolder('lock', 'holder-stop', { lostAt: 5_160 });
    expect([cell.replaced, cell.told, cell.verdict]).toEqual([1, 1, 'ok (expected overlap)']);
  });

  it.each(['ERR_RLOCK_LOCK_LOST', 'ERR_RLOCK_ILLEGAL_MONITOR_STATE'])('passes a holder told only by its release rejecting with %s', (code) => {
    const cell = pausedHolder('psem', 'holder-stop', { lostAt: 0, releaseError: code });
    expect([cell.replaced, cell.told, cell.verdict]).toEqual([1, 1, 'ok (expected overlap)']);
  });

  it('does not count a release that failed for another reason as being told', () => {
    const cell = pausedHolder('lock', 'holder-stop', { lostAt: 0, releaseError: 'ERR_RLOCK_REDIS_UNAVAILABLE' });
    expect(cell.verdict).toBe('FAIL');
  });

  it('only notes the count after a fault where the docs promise no verdict on it', () => {
    const cell = pausedHolder('lock', 'sentinel-failover', { lostAt: 0 });
    expect(cell.why).toEqual([]);
    expect(cell.verdict).toBe('ok (expected overlap) (0 of 1 replaced holders told they lost)');
  });
});
