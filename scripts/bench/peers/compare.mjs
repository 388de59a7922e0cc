// @ts-check
/**
 * Rounds and the comparison table shared by the peer scenarios: every library
 * runs once per round, in the same order (A B C, A B C, A B C), and the table
 * shows the median over rounds, the min–max, and the ratios of the medians to
 * the raw baseline and to the best peer.
 */
import { median } from '../stats.mjs';
import { markdownTable } from '../table.mjs';
import { describeError } from './workers.mjs';
import { labelOf, versionOf } from './libraries.mjs';

/**
 * @typedef {import('./libraries.mjs').Library} Library
 * @typedef {Record<string, number | string | undefined>} Figures one round of one library
 */

/**
 * @typedef {object} Outcome what the rounds gave
 * @property {Map<string, Figures[]>} results by library id, one entry per round that ran
 * @property {Map<string, string>} failed by library id: why it could not run (it is skipped from then on)
 * @property {Map<string, string[]>} roundErrors by library id: rounds that failed after one had run
 */

/**
 * Every round's figures of this run, in order, for `scripts/bench/run.mjs --json` (and the
 * charts drawn from it): scenario tag, library, round, figures.
 * @type {{ tag: string, library: string, label: string, kind: string, round: number, figures: Figures }[]}
 */
export const recordedRounds = [];

/**
 * Runs `measureOnce(library, round)` for every library, round by round.
 * A library that is not installed, or whose first round fails, is not tried
 * again; a later failed round is noted and the others still count.
 * @param {object} options
 * @param {Library[]} options.libraries in the order they run within a round
 * @param {number} options.rounds
 * @param {(message: string) => void} options.log
 * @param {string} options.tag e.g. `peers-s1`, for the log
 * @param {(library: Library, round: number) => Promise<Figures>} options.measureOnce
 * @returns {Promise<Outcome>}
 */
export async function runRounds({ libraries, rounds, log, tag, measureOnce }) {
  /** @type {Outcome} */
  const outcome = { results: new Map(), failed: new Map(), roundErrors: new Map() };
  for (const library of libraries) {
    if (versionOf(library) === 'not installed') outcome.failed.set(library.id, `package ${library.pkg} is not installed (npm install --prefix scripts/bench)`);
  }
  for (let round = 1; round <= rounds; round++) {
    for (const library of libraries) {
      if (outcome.failed.has(library.id)) continue;
      log(`${tag}: ${labelOf(library)} (round ${round}/${rounds})`);
      try {
        const figures = await measureOnce(library, round);
        recordedRounds.push({ tag, library: library.id, label: labelOf(library), kind: library.kind, round, figures });
        outcome.results.set(library.id, [...(outcome.results.get(library.id) ?? []), figures]);
      } catch (error) {
        const why = describeError(error);
        log(`${tag}: ${library.id} round ${round} failed: ${why}`);
        if (!outcome.results.has(library.id)) outcome.failed.set(library.id, why);
        else outcome.roundErrors.set(library.id, [...(outcome.roundErrors.get(library.id) ?? []), `round ${round}: ${why}`]);
      }
    }
  }
  return outcome;
}

/**
 * @typedef {object} Column an extra column: the median over rounds of one figure
 * @property {string} header
 * @property {string} key
 * @property {(value: number) => string} format
 * @property {'median' | 'sum' | 'max' | 'min'} [over] how rounds combine (default median)
 */

/**
 * @param {object} options
 * @param {Library[]} options.libraries
 * @param {Outcome} options.outcome
 * @param {{ header: string, key: string, format: (value: number) => string, higherIsBetter: boolean }} options.headline
 * @param {Column[]} [options.columns]
 * @param {(runs: Figures[]) => string[]} [options.textColumns] values of extra text columns (after `columns`)
 * @param {string[]} [options.textHeaders]
 * @returns {{ table: string, notes: string[], medians: Map<string, number> }}
 */
export function comparisonTable({ libraries, outcome, headline, columns = [], textColumns, textHeaders = [] }) {
  /** @type {Map<string, number>} */
  const medians = new Map();
  for (const library of libraries) {
    const runs = outcome.results.get(library.id);
    if (runs) medians.set(library.id, median(runs.map((r) => Number(r[headline.key]))));
  }
  const raw = medians.get('raw');
  const peerValues = libraries.filter((l) => l.kind === 'peer' && medians.has(l.id)).map((l) => /** @type {number} */ (medians.get(l.id)));
  const best = peerValues.length === 0 ? Number.NaN : headline.higherIsBetter ? Math.max(...peerValues) : Math.min(...peerValues);
  const bestPeer = libraries.find((l) => l.kind === 'peer' && medians.get(l.id) === best);
  /** @param {number} value @param {number | undefined} base */
  const ratio = (value, base) => (base && Number.isFinite(base) && Number.isFinite(value) ? `${(value / base).toFixed(2)}×` : '–');

  const rows = libraries.map((library) => {
    const runs = outcome.results.get(library.id);
    const label = library.kind === 'rlock' ? `**${labelOf(library)}**` : labelOf(library);
    const blank = [...columns.map(() => ''), ...textHeaders.map(() => '')];
    if (!runs) return [label, `could not run: ${outcome.failed.get(library.id) ?? 'not measured'}`, '', '', '', '', ...blank];
    const values = runs.map((r) => Number(r[headline.key]));
    const value = /** @type {number} */ (medians.get(library.id));
    const roundsNote = runs.length < Math.max(...[...outcome.results.values()].map((r) => r.length)) ? ` (${runs.length} rounds)` : '';
    return [
      label,
      headline.format(value) + roundsNote,
      `${headline.format(Math.min(...values))} – ${headline.format(Math.max(...values))}`,
      library.id === 'raw' ? '1.00×' : ratio(value, raw),
      ratio(value, best),
      ...columns.map((column) => {
        const figures = runs.map((r) => Number(r[column.key]));
        const over = column.over ?? 'median';
        const combined =
          over === 'sum' ? figures.reduce((a, b) => a + b, 0) : over === 'max' ? Math.max(...figures) : over === 'min' ? Math.min(...figures) : median(figures);
        return column.format(combined);
      }),
      ...(textColumns ? textColumns(runs) : []),
    ];
  });
  const table = markdownTable(
    ['library', `${headline.header} (median)`, 'min – max', '× raw', '× best peer', ...columns.map((c) => c.header), ...textHeaders],
    rows,
    'lrrrr' + 'r'.repeat(columns.length) + 'r'.repeat(textHeaders.length),
  );
  const notes = [];
  if (bestPeer) notes.push(`Best peer on ${headline.header}: ${labelOf(bestPeer)}.`);
  for (const library of libraries) if (library.note && outcome.results.has(library.id)) notes.push(`"${library.name}": ${library.note}.`);
  for (const [id, errors] of outcome.roundErrors) notes.push(`${id}: ${errors.join('; ')} (the other rounds count).`);
  return { table, notes, medians };
}

/**
 * The first error a library's rounds reported (e.g. failed pairs), for the notes.
 * @param {Library[]} libraries @param {Outcome} outcome
 */
export function errorNotes(libraries, outcome) {
  const notes = [];
  for (const library of libraries) {
    const runs = outcome.results.get(library.id) ?? [];
    const first = runs.find((r) => r.firstError)?.firstError;
    const unhandled = runs.find((r) => r.unhandled)?.unhandled;
    if (first) notes.push(`${library.name}: first error: ${first}.`);
    if (unhandled) notes.push(`${library.name}: unhandled rejection inside the library: ${unhandled}.`);
  }
  return notes;
}
