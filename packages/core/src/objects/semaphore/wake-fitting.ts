import type { WaitQueue } from '../../engine/wait-queue.js';

/**
 * A waiter's id on a semaphore's channel: unique per call (so a grant never
 * wakes "siblings"), ending in the number of permits it wants.
 */
export function waiterId(call: number, permits: number): string {
  return `${call.toString(36)}:${permits}`;
}

function wantedBy(id: string): number {
  return Number(id.slice(id.lastIndexOf(':') + 1));
}

/**
 * The semaphore's wake policy. The message is the available count after
 * permits came back; it wakes as many local waiters as that count lets
 * proceed, in arrival order, not all and not one: with waiters that each want
 * one permit, `available` of them (the queue's wakeN). A waiter that wants
 * more than is left is passed over for the ones behind it that fit.
 */
export function wakeFitting(payload: string, queue: WaitQueue): void {
  let left = Number(payload);
  if (!(left > 0)) return;
  const ids: string[] = [];
  let inOrder = true;
  let skipped = false;
  for (const waiter of queue.waiters) {
    const wanted = wantedBy(waiter.id);
    if (wanted > left) {
      skipped = true;
      continue;
    }
    left -= wanted;
    ids.push(waiter.id);
    if (skipped) inOrder = false;
    if (left <= 0) break;
  }
  // The common case (the first n waiters fit): wake n, and a wake that finds
  // its waiter busy trying is kept for its next sleep.
  if (inOrder) queue.wakeN(ids.length);
  else for (const id of ids) queue.wakeId(id);
}
