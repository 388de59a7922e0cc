import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One cell of the matrix as scripts/faults/run.mjs writes it with --json. */
interface Cell {
  kind: string;
  fault: string;
  sections: number;
  overlaps: number;
  expectedOverlap: boolean;
  lostUpdates: number;
  tokenRegressions: number;
  keysLeft: number;
  foreignErrors: number;
  unhandled: number;
  replaced: number;
  told: number;
  verdict: string;
  why: string[];
}

interface Report {
  cells: Cell[];
  outage?: { runs: number; passed: number; worstMs: number };
}

const root = fileURLToPath(new URL('../../../../', import.meta.url));

// The short form of `npm run faults`: every object kind through every fault in
// worker processes (the built dist), the recorded history checked against what
// the docs promise, and the release during an outage a few times. The runner
// starts and stops its own Redis deployments.
describe('the fault matrix, short form', () => {
  let report: Report;
  let exit: { code: number | null; output: string };

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rlock-faults-'));
    const json = join(dir, 'matrix.json');
    try {
      exit = await new Promise((resolve) => {
        const child = spawn(process.execPath, ['scripts/faults/run.mjs', '--short', '--no-write', '--json', json], {
          cwd: root,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        // A hang is a failure too: the runner bounds each phase, this bounds the whole.
        const timer = setTimeout(() => child.kill('SIGKILL'), 170_000);
        child.on('exit', (code) => {
          clearTimeout(timer);
          resolve({ code, output });
        });
      });
      report = JSON.parse(readFileSync(json, 'utf8')) as Report;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('holds every verdict: no overlap, over-grant or early latch where the docs promise none, no lost update behind the fence, progress after each heal, no key left, typed errors only', () => {
    const failed = report.cells.filter((cell) => cell.verdict.startsWith('FAIL')).map((cell) => `${cell.kind} × ${cell.fault}: ${cell.why.join('; ')}`);
    expect(failed).toEqual([]);
    expect(exit.code).toBe(0);
    // Every kind met every fault.
    const kinds = new Set(report.cells.map((cell) => cell.kind));
    const faults = new Set(report.cells.map((cell) => cell.fault));
    expect(report.cells).toHaveLength(kinds.size * faults.size);
    expect([...kinds].sort()).toEqual(['fair', 'latch', 'leader', 'lock', 'multi', 'nonre', 'nonre-fair', 'psem', 'rw', 'sem', 'spin'].sort());
    expect([...faults].sort()).toEqual(
      [
        'client-pause',
        'cluster-failover',
        'debug-sleep',
        'holder-kill',
        'holder-stop',
        'latency',
        'none',
        'partition',
        'redis-kill-aof',
        'redis-kill-noaof',
        'sentinel-failover',
      ].sort(),
    );
    for (const cell of report.cells) {
      expect({ cell: `${cell.kind} × ${cell.fault}`, lostUpdates: cell.lostUpdates, tokenRegressions: cell.tokenRegressions, keysLeft: cell.keysLeft }).toEqual(
        {
          cell: `${cell.kind} × ${cell.fault}`,
          lostUpdates: 0,
          tokenRegressions: 0,
          keysLeft: 0,
        },
      );
    }
  });

  it.each(['lock', 'spin', 'nonre-fair'])('sees the overlap a holder paused past its lease causes, where the docs say it can happen (%s)', (kind) => {
    // The runner must be able to see an overlap: the paused holder's section overlaps its successor's,
    // whether the successor was woken by a message (lock), tried again after a back-off (spin) or was next in the queue (nonre-fair).
    const paused = report.cells.filter((cell) => cell.fault === 'holder-stop' && cell.kind === kind);
    expect(paused).toHaveLength(1);
    expect(paused[0]?.overlaps).toBeGreaterThan(0);
    expect(paused[0]?.expectedOverlap).toBe(true);
    // And the paused holder, replaced, was told it lost.
    expect(paused[0]?.replaced).toBeGreaterThan(0);
    expect(paused[0]?.told).toBe(paused[0]?.replaced);
  });

  it('frees a lock whose release failed during an outage within 5 s of Redis being back, every run', () => {
    expect(report.outage).toBeDefined();
    expect(report.outage?.runs).toBeGreaterThanOrEqual(2);
    expect(report.outage?.passed).toBe(report.outage?.runs);
  });
});
