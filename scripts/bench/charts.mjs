// @ts-check
/**
 * Draws the README's charts from a bench run's JSON, as SVG: Vega-Lite specs
 * compiled to Vega and rendered headless (`view.toSVG()`, no canvas needed).
 *
 *   npm run bench -- peers --json docs/charts/bench.json
 *   node scripts/bench/charts.mjs docs/charts/bench.json      # writes docs/charts/*.svg
 *
 * A chart is an entry of CHARTS: a file name and a function from the run's
 * rounds to a Vega-Lite spec (or undefined when the run has no such scenario,
 * so a partial run draws what it has).
 *
 *   node scripts/bench/charts.mjs --faults [report.json]     # writes docs/charts/fault-matrix.svg
 *
 * draws the fault matrix (scripts/faults) instead: objects × faults, a cell
 * per verdict, from a `npm run faults -- --json <report.json>` report, or
 * without one from the table its runner wrote to docs/fault-matrix.md.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as vega from 'vega';
import * as vegaLite from 'vega-lite';

/**
 * @typedef {{ tag: string, library: string, label: string, kind: string, round: number, figures: Record<string, number | string | undefined> }} Round
 * @typedef {{ runAt: string, commit: string, machine: Record<string, string>, warmupMs: number, durationMs: number, rounds: Round[] }} Run
 * @typedef {Record<string, unknown>} Spec a Vega-Lite spec
 */

const OUT_DIR = fileURLToPath(new URL('../../docs/charts/', import.meta.url));
const FAULT_MATRIX = fileURLToPath(new URL('../../docs/fault-matrix.md', import.meta.url));

/**
 * The first Markdown table of a file: its header cells and rows of cells.
 * @param {string} text
 * @returns {{ headers: string[], rows: string[][] } | undefined}
 */
function firstTable(text) {
  const lines = text.split('\n');
  const start = lines.findIndex((line, i) => line.trim().startsWith('|') && /^\s*\|[\s:|-]+\|\s*$/.test(lines[i + 1] ?? ''));
  if (start === -1) return undefined;
  /** @param {string} line */
  const cells = (line) =>
    line
      .trim()
      .replace(/^\||\|$/g, '')
      .split('|')
      .map((cell) => cell.trim().replace(/[*`]/g, ''));
  const rows = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.trim().startsWith('|')) break;
    rows.push(cells(line));
  }
  return { headers: cells(/** @type {string} */ (lines[start])), rows };
}

/** rlock in one colour, the peers in another, the hand-written baselines grey. */
const KIND_COLOURS = { scale: { domain: ['rlock', 'peer', 'raw'], range: ['#d62728', '#4c78a8', '#9d9d9d'] }, legend: { title: null } };

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? /** @type {number} */ (sorted[mid]) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/**
 * One row per library of a scenario: the median over rounds of a figure.
 * @param {Round[]} rounds @param {string} tag @param {string} key
 * @returns {{ library: string, kind: string, value: number }[]}
 */
function medians(rounds, tag, key) {
  /** @type {Map<string, Round[]>} */
  const byLibrary = new Map();
  for (const round of rounds.filter((r) => r.tag === tag)) byLibrary.set(round.label, [...(byLibrary.get(round.label) ?? []), round]);
  return [...byLibrary].map(([library, runs]) => ({
    library,
    kind: /** @type {Round} */ (runs[0]).kind,
    value: median(runs.map((r) => Number(r.figures[key]))),
  }));
}

/**
 * A horizontal bar per library.
 * @param {{ library: string, kind: string, value: number }[]} rows @param {string} title @param {string} axis
 * @returns {Spec}
 */
function bars(rows, title, axis) {
  return {
    title,
    width: 260,
    data: { values: rows },
    mark: { type: 'bar' },
    encoding: {
      y: { field: 'library', type: 'nominal', sort: '-x', title: null, axis: { labelLimit: 300 } },
      x: { field: 'value', type: 'quantitative', title: axis },
      color: { field: 'kind', type: 'nominal', ...KIND_COLOURS },
    },
  };
}

/** @type {{ file: string, build: (run: Run) => Spec | undefined }[]} */
const CHARTS = [
  {
    // S2: how long each acquisition waited, as a distribution per library (the round with the median rate).
    file: 's2-waits.svg',
    build: (run) => {
      const s2 = run.rounds.filter((r) => r.tag === 'peers-s2' && typeof r.figures.waitQuantiles === 'string');
      if (s2.length === 0) return undefined;
      /** @type {{ library: string, kind: string, percentile: number, waitMs: number }[]} */
      const points = [];
      for (const label of new Set(s2.map((r) => r.label))) {
        const runs = s2.filter((r) => r.label === label).sort((a, b) => Number(a.figures.rate) - Number(b.figures.rate));
        const mid = /** @type {Round} */ (runs[Math.floor((runs.length - 1) / 2)]);
        /** @type {number[]} */
        const quantiles = JSON.parse(String(mid.figures.waitQuantiles));
        const at = [...Array.from({ length: 99 }, (_, i) => i + 1), 99.9, 100];
        // A log scale has no 0: a wait under 10 µs is drawn at 0.01 ms.
        quantiles.forEach((waitMs, i) => {
          const percentile = /** @type {number} */ (at[i]);
          // x in "nines" (90 % → 1, 99 % → 2, 99.9 % → 3), so the tail where the libraries differ gets the width; the max at 3.3.
          const nines = percentile === 100 ? 3.3 : -Math.log10(1 - percentile / 100);
          points.push({ library: label, kind: mid.kind, percentile, nines, waitMs: Math.max(waitMs, 0.01) });
        });
      }
      return {
        title: { text: 'S2: wait for the lock, 4 processes × 8 tasks on one name', subtitle: 'each acquisition’s wait, by percentile; log scale' },
        width: 520,
        height: 300,
        data: { values: points },
        mark: { type: 'line', point: false },
        encoding: {
          x: {
            field: 'nines',
            type: 'quantitative',
            title: 'share of waits at or below',
            scale: { domain: [0, 3.3] },
            axis: {
              values: [0.301, 1, 2, 3, 3.3],
              labelOverlap: false,
              labelExpr: "datum.value < 0.5 ? '50 %' : datum.value < 1.5 ? '90 %' : datum.value < 2.5 ? '99 %' : datum.value < 3.2 ? '99.9 %' : 'max'",
            },
          },
          y: { field: 'waitMs', type: 'quantitative', title: 'wait (ms)', scale: { type: 'log' } },
          color: { field: 'library', type: 'nominal', title: null, legend: { labelLimit: 400 } },
          strokeWidth: { condition: { test: "datum.kind === 'rlock'", value: 3 }, value: 1.5 },
        },
      };
    },
  },
  {
    // S1 (one server) and S3 (Redlock over 5 masters), uncontended, beside the peers.
    file: 's1-s3.svg',
    build: (run) => {
      const s1 = medians(run.rounds, 'peers-s1', 'rate');
      const s3 = medians(run.rounds, 'peers-s3', 'p50');
      const panels = [
        ...(s1.length ? [bars(s1, 'S1: uncontended lock + unlock', 'pairs/s (higher is better)')] : []),
        ...(s3.length ? [bars(s3, 'S3: Redlock, 5 masters, acquire', 'p50 ms (lower is better)')] : []),
      ];
      return panels.length ? { hconcat: panels, resolve: { scale: { color: 'shared' } } } : undefined;
    },
  },
  {
    // The contended rows that are not S2: the semaphore (8 permits) and Redlock (S4).
    file: 'contended.svg',
    build: (run) => {
      const semaphore = medians(run.rounds, 'peers-semaphore', 'rate');
      const s4 = medians(run.rounds, 'peers-s4', 'rate');
      const panels = [
        ...(semaphore.length ? [bars(semaphore, 'Semaphore, 8 permits, 4 × 8 tasks', 'acquisitions/s')] : []),
        ...(s4.length ? [bars(s4, 'S4: Redlock contended, 4 × 8 tasks', 'acquisitions/s (0: stalled)')] : []),
      ];
      return panels.length ? { hconcat: panels, resolve: { scale: { color: 'shared' } } } : undefined;
    },
  },
];

/**
 * One cell of the fault matrix as the chart needs it.
 * @typedef {{ object: string, fault: string, sections: number, overlaps: number, allowed: boolean, verdict: string, outcome: string }} FaultCell
 */

/** Verdict classes, in the legend's order, with their colours: what a reader must tell apart at a glance. */
const OUTCOMES = [
  ['ok', '#a1d99b'],
  ['ok: overlaps the docs allow', '#fdd49e'],
  ['ok: a documented loss', '#c6dbef'],
  ['known defect', '#d4b9da'],
  ['FAIL', '#d62728'],
];

/** @param {string} verdict the runner's verdict text (scripts/faults/check.mjs) @returns {string} its class (OUTCOMES) */
function outcomeOf(verdict) {
  if (verdict.startsWith('FAIL')) return 'FAIL';
  if (verdict.startsWith('KNOWN DEFECT')) return 'known defect';
  if (verdict.startsWith('ok (expected overlap')) return 'ok: overlaps the docs allow';
  // The other notes of an ok verdict: a FIFO count (no loss), or permits a failed release may have lost (documented).
  if (/permits/.test(verdict)) return 'ok: a documented loss';
  return 'ok';
}

/**
 * The fault matrix's cells and what to print under it, from a `--json` report
 * (run.mjs) or from the Markdown the runner wrote (docs/fault-matrix.md).
 * @param {string} file
 * @returns {{ cells: FaultCell[], notes: string[] }}
 */
function readFaultMatrix(file) {
  const text = readFileSync(file, 'utf8');
  if (file.endsWith('.json')) {
    /** @type {{ runAt?: string, machine?: string, cells: { kind: string, fault: string, sections: number, overlaps: number, expectedOverlap: boolean, verdict: string, why: string[] }[], outage?: { runs: number, passed: number, worstMs: number } }} */
    const report = JSON.parse(text);
    const cells = report.cells.map((cell) => {
      const verdict = cell.verdict + (cell.why.length > 0 ? `: ${cell.why.join('; ')}` : '');
      return {
        object: cell.kind,
        fault: cell.fault,
        sections: cell.sections,
        overlaps: cell.overlaps,
        allowed: cell.expectedOverlap,
        verdict,
        outcome: outcomeOf(verdict),
      };
    });
    const { outage } = report;
    return {
      cells,
      notes: [
        ...(outage ? [`release during an outage: ${outage.passed} of ${outage.runs} runs, slowest ${Math.round(outage.worstMs)} ms after Redis was back`] : []),
        `${basename(file)}${report.runAt ? `, run ${report.runAt.slice(0, 16).replace('T', ' ')} UTC` : ''}${report.machine ? `; ${report.machine}` : ''}`,
      ],
    };
  }
  const table = firstTable(text);
  if (!table) throw new Error(`${file}: no table`);
  const column = (/** @type {string} */ name) => {
    const index = table.headers.indexOf(name);
    if (index === -1) throw new Error(`${file}: the table has no column "${name}"`);
    return index;
  };
  const [object, fault, sections, overlaps, verdict] = ['object', 'fault', 'sections', 'overlaps', 'verdict'].map(column);
  const cells = table.rows.map((row) => {
    const cell = (/** @type {number} */ index) => row[/** @type {number} */ (index)] ?? '';
    return {
      object: cell(object),
      fault: cell(fault),
      sections: Number(cell(sections)),
      overlaps: Number.parseInt(cell(overlaps), 10),
      allowed: cell(overlaps).includes('(allowed)'),
      verdict: cell(verdict),
      outcome: outcomeOf(cell(verdict)),
    };
  });
  // The runner's header: "Generated by … on <date> UTC;" then the machine on the next line.
  const generated = /on (\d{4}-\d\d-\d\d \d\d:\d\d UTC);\n(.*)\.\n/.exec(text);
  const outage = /Release during an outage[^:]*: \*\*(\d+ of \d+)\*\* runs, slowest (\d+) ms/.exec(text);
  return {
    cells,
    notes: [
      ...(outage ? [`release during an outage: ${outage[1]} runs, slowest ${outage[2]} ms after Redis was back`] : []),
      `docs/fault-matrix.md${generated ? `, run ${generated[1]}; ${generated[2]}` : ''}`,
    ],
  };
}

/**
 * Objects (rows) × faults (columns), in the runner's order; a cell's colour
 * is its verdict, its large figure the overlapping sections (framed where the
 * docs allow them), its small one the critical sections run.
 * @param {{ cells: FaultCell[], notes: string[] }} matrix
 * @returns {Spec}
 */
function faultMatrixSpec({ cells, notes }) {
  const failed = cells.filter((cell) => cell.outcome === 'FAIL').length;
  const position = {
    x: { field: 'fault', type: 'nominal', title: null, sort: null, axis: { orient: 'top', labelAngle: -30, labelLimit: 200 } },
    y: { field: 'object', type: 'nominal', title: null, sort: null, axis: { labelFontSize: 12 } },
  };
  return {
    title: {
      text: `Fault matrix: ${cells.length - failed} of ${cells.length} cells hold${failed ? `, ${failed} FAIL` : ''}`,
      subtitle: [
        'colour: the verdict · large figure: overlapping critical sections · small: critical sections run',
        'framed: a fault after which the docs say exclusion may break (overlaps allowed, fencing must hold)',
        ...notes,
      ],
      anchor: 'start',
      subtitlePadding: 6,
      offset: 12,
    },
    width: { step: 74 },
    height: { step: 36 },
    data: { values: cells },
    encoding: position,
    layer: [
      {
        mark: { type: 'rect' },
        encoding: {
          color: {
            field: 'outcome',
            type: 'nominal',
            title: 'verdict',
            scale: { domain: OUTCOMES.map(([name]) => name), range: OUTCOMES.map(([, colour]) => colour) },
            legend: { orient: 'bottom', direction: 'horizontal', columns: 5, columnPadding: 16, symbolType: 'square', labelLimit: 300 },
          },
          stroke: { condition: { test: 'datum.allowed', value: '#555' }, value: 'white' },
          strokeWidth: { condition: { test: 'datum.allowed', value: 2 }, value: 1 },
          tooltip: [
            { field: 'object', type: 'nominal' },
            { field: 'fault', type: 'nominal' },
            { field: 'sections', type: 'quantitative' },
            { field: 'overlaps', type: 'quantitative' },
            { field: 'verdict', type: 'nominal' },
          ],
        },
      },
      {
        mark: { type: 'text', dy: -5, fontSize: 13, fontWeight: 'bold' },
        encoding: {
          text: { field: 'overlaps', type: 'quantitative', format: ',d' },
          color: { condition: { test: "datum.outcome === 'FAIL'", value: 'white' }, value: 'black' },
        },
      },
      {
        mark: { type: 'text', dy: 9, fontSize: 9 },
        encoding: {
          text: { field: 'sections', type: 'quantitative', format: ',d' },
          color: { condition: { test: "datum.outcome === 'FAIL'", value: 'white' }, value: '#444' },
        },
      },
    ],
    config: { axis: { domain: false, ticks: false, labelFontSize: 11 }, view: { stroke: null } },
  };
}

/**
 * @param {Spec} spec a Vega-Lite spec
 * @param {string} footnote the run it was drawn from
 * @returns {Promise<string>} the SVG
 */
async function render(spec, footnote) {
  const full = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    ...spec,
    config: { font: 'sans-serif', background: 'white', .../** @type {Record<string, unknown>} */ (spec.config ?? {}) },
    // The run under every chart, so a figure is never read without its machine and date.
    ...(footnote && spec.hconcat ? { title: { text: footnote, anchor: 'start', orient: 'bottom', fontSize: 10, fontWeight: 'normal' } } : {}),
  };
  if (footnote && !spec.hconcat && typeof spec.title === 'object' && spec.title)
    full.title = { ...spec.title, subtitle: [/** @type {any} */ (spec.title).subtitle ?? '', footnote] };
  const view = new vega.View(vega.parse(vegaLite.compile(/** @type {any} */ (full)).spec), { renderer: 'none' });
  return view.toSVG();
}

const input = process.argv[2];
if (!input) {
  console.error('usage: node scripts/bench/charts.mjs <bench.json>   (from npm run bench -- peers --json <bench.json>)');
  console.error('       node scripts/bench/charts.mjs --faults [report.json]   (from npm run faults -- --json <report.json>; default docs/fault-matrix.md)');
  process.exit(2);
}
mkdirSync(OUT_DIR, { recursive: true });
if (input === '--faults') {
  const file = join(OUT_DIR, 'fault-matrix.svg');
  writeFileSync(file, await render(faultMatrixSpec(readFaultMatrix(process.argv[3] ?? FAULT_MATRIX)), ''));
  console.error(`wrote ${file}`);
  process.exit(0);
}
/** @type {Run} */
const run = JSON.parse(readFileSync(input, 'utf8'));
const footnote = `${run.runAt.slice(0, 10)}${run.commit}; ${run.machine.CPU ?? ''} ${run.machine.cores ?? ''} cores; ${run.durationMs / 1000} s windows; medians of rounds`;
for (const chart of CHARTS) {
  const spec = chart.build(run);
  if (!spec) {
    console.error(`${chart.file}: the run has no figures for it; left as it was`);
    continue;
  }
  const file = join(OUT_DIR, chart.file);
  writeFileSync(file, await render(spec, footnote));
  console.error(`wrote ${file}`);
}
