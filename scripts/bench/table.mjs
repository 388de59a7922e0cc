// @ts-check
/** Markdown output helpers: tables padded so they also read well in a terminal. */

/**
 * @param {readonly string[]} headers
 * @param {ReadonlyArray<ReadonlyArray<string | number>>} rows
 * @param {string} [align] one letter per column, `l` or `r`; numbers default to `r`
 * @returns {string}
 */
export function markdownTable(headers, rows, align) {
  const cells = rows.map((row) => headers.map((_, i) => String(row[i] ?? '')));
  const sides = headers.map((_, i) => {
    const given = align?.[i];
    if (given === 'l' || given === 'r') return given;
    return rows.every((row) => typeof row[i] === 'number') && rows.length > 0 ? 'r' : 'l';
  });
  const widths = headers.map((header, i) => Math.max(3, header.length, ...cells.map((row) => /** @type {string} */ (row[i]).length)));
  /** @param {string} text @param {number} i */
  const pad = (text, i) => (sides[i] === 'r' ? text.padStart(/** @type {number} */ (widths[i])) : text.padEnd(/** @type {number} */ (widths[i])));
  /** @param {readonly string[]} row */
  const line = (row) => `| ${row.map(pad).join(' | ')} |`;
  const rule = `| ${widths.map((w, i) => (sides[i] === 'r' ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w))).join(' | ')} |`;
  return [line(headers), rule, ...cells.map(line)].join('\n');
}

/**
 * A number with a thousands separator and at most `digits` decimals.
 * @param {number} value @param {number} [digits]
 */
export function num(value, digits = 0) {
  if (!Number.isFinite(value)) return '–';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Milliseconds with a precision that suits their size. @param {number} ms */
export function ms(ms) {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 1) return `${ms.toFixed(3)} ms`;
  if (ms < 100) return `${ms.toFixed(2)} ms`;
  return `${num(ms, 0)} ms`;
}

/** A 0..1 fraction as a percentage. @param {number} fraction */
export function pct(fraction) {
  return Number.isFinite(fraction) ? `${(fraction * 100).toFixed(0)} %` : '–';
}
