import type { WaitQueue } from '../../engine/wait-queue.js';

/** A waiter's id: unique per call (a grant never wakes "siblings"), ending in the number of permits it wants. */
export function waiterId(call: string, permits: number): string {
  return `${call}:${permits}`;
}

export function wantedBy(id: string): number {
  return Number(id.slice(id.lastIndexOf(':') + 1));
}

/**
 * Every process hears `<came back>:<available>` (read by readPermitCounts), so each wakes only the local waiters those permits can serve (a herd
 * gains nothing), in arrival order, passing over one that wants more than is available.
 */
export function wakeFitting(cameBack: number, available: number, queue: WaitQueue, served?: (id: string) => boolean): void {
  if (!(cameBack > 0 && available > 0)) return;
  const ids: string[] = [];
  for (const waiter of queue.waiters) {
    // Handed permits locally already.
    if (served?.(waiter.id)) continue;
    const wanted = wantedBy(waiter.id);
    if (wanted > available) continue;
    available -= wanted;
    cameBack -= wanted;
    ids.push(waiter.id);
    if (cameBack <= 0 || available <= 0) break;
  }
  // By id: the wake is for the waiter the permits fit (one busy trying finds it at its next sleep), not whoever sleeps first.
  for (const id of ids) queue.wakeId(id);
}
