import type { WaitQueue } from '../../engine/wait-queue.js';

/**
 * A waiter's id on a semaphore's channel: unique per call (so a grant never
 * wakes "siblings"), ending in the number of permits it wants.
 */
export function waiterId(call: string, permits: number): string {
  return `${call}:${permits}`;
}

/** The permits the waiter `id` wants. */
export function wantedBy(id: string): number {
  return Number(id.slice(id.lastIndexOf(':') + 1));
}

/**
 * Wake policy for `<came back>:<available>`: every process hears it, so each
 * wakes only the local waiters those permits can serve (a herd gains nothing),
 * in arrival order, passing over one that wants more than is available.
 */
export function wakeFitting(payload: string, queue: WaitQueue, served?: (id: string) => boolean): void {
  const colon = payload.indexOf(':');
  let cameBack = Number(payload.slice(0, colon));
  let available = Number(payload.slice(colon + 1));
  if (!(cameBack > 0 && available > 0)) return;
  const ids: string[] = [];
  for (const waiter of queue.waiters) {
    // Handed permits by a task of this process already: it needs no wake.
    if (served?.(waiter.id)) continue;
    const wanted = wantedBy(waiter.id);
    if (wanted > available) continue;
    available -= wanted;
    cameBack -= wanted;
    ids.push(waiter.id);
    if (cameBack <= 0 || available <= 0) break;
  }
  // By id, always: the wake is for the waiter the permits fit (one busy trying
  // finds it at its next sleep), never for whichever other waiter sleeps first.
  for (const id of ids) queue.wakeId(id);
}
