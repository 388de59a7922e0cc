// @ts-check
/** Small statistics helpers for benchmark samples (all values in the caller's unit, usually ms). */

/**
 * @typedef {object} Summary
 * @property {number} count
 * @property {number} mean
 * @property {number} min
 * @property {number} p50
 * @property {number} p90
 * @property {number} p99
 * @property {number} max
 */

/**
 * Nearest-rank percentile of an ascending array: the smallest sample with at
 * least p % of the samples at or below it. NaN for no samples.
 * @param {ArrayLike<number>} sorted ascending
 * @param {number} p 0..100
 */
export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  if (p <= 0) return /** @type {number} */ (sorted[0]);
  const rank = Math.ceil((p / 100) * sorted.length);
  return /** @type {number} */ (sorted[Math.min(sorted.length, rank) - 1]);
}

/**
 * @param {Iterable<number>} samples any order; not modified
 * @returns {Summary}
 */
export function summarize(samples) {
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count: sorted.length,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    min: sorted.length ? /** @type {number} */ (sorted[0]) : Number.NaN,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? /** @type {number} */ (sorted[sorted.length - 1]) : Number.NaN,
  };
}

/** @param {readonly number[]} values */
export function median(values) {
  return percentile(Float64Array.from(values).sort(), 50);
}
