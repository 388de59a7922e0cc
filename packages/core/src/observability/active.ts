// Active holds and waiters, read by observable counters at collection (no measurement per acquire or release).
// Process-wide, as the series are: two callbacks observing one attribute set would not add up.
import type { OtelAttributes, OtelMeter, OtelObservableResult } from './otel-api.js';

/** The holds and waiters of one attribute set. */
export interface ActiveCount {
  readonly attributes: OtelAttributes;
  holds: number;
  waiters: number;
  /** Dropped from the registry while idle: whoever still points at it asks {@link activeCount} again. */
  retired: boolean;
}

const counts = new Map<string, ActiveCount>();
/** Attribute sets kept past which idle ones are dropped after a collection reported them at 0. */
const MAX_COUNTS = 1_000;
/** Meters the observables are registered on (one per MeterProvider). */
const observedMeters = new WeakSet<object>();

/** The count of attribute set `id` (`attributes` when it is new). */
export function activeCount(id: string, attributes: OtelAttributes): ActiveCount {
  if (!counts.has(id)) counts.set(id, { attributes, holds: 0, waiters: 0, retired: false });
  return counts.get(id) as ActiveCount;
}

function report(result: OtelObservableResult, field: 'holds' | 'waiters'): void {
  for (const count of counts.values()) result.observe(count[field], count.attributes);
}

/** Registers the two observables on `meter`, once per meter. */
export function observeActive(meter: OtelMeter): void {
  if (observedMeters.has(meter)) return;
  observedMeters.add(meter);
  meter
    .createObservableUpDownCounter('rlock.holds.active', { unit: '{hold}', description: 'Holds held now by this process.' })
    .addCallback((result) => report(result, 'holds'));
  meter.createObservableUpDownCounter('rlock.waiters.active', { unit: '{waiter}', description: 'Acquisition calls waiting now.' }).addCallback((result) => {
    report(result, 'waiters');
    prune();
  });
}

/** Past MAX_COUNTS (a metricName that returns raw names), idle sets go once they were reported at 0. */
function prune(): void {
  if (counts.size <= MAX_COUNTS) return;
  for (const [id, count] of counts) {
    if (count.holds === 0 && count.waiters === 0) {
      count.retired = true;
      counts.delete(id);
    }
  }
}
