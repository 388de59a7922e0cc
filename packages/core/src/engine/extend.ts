import { IllegalMonitorStateError } from '../errors.js';
import type { EngineContext } from './engine-context.js';
import type { Hold } from './hold.js';
import { monotonicNow } from '../connection/time.js';

/**
 * Extends `hold` to `leaseMs` from before the send, in its owner's turn; a fixed lease past its deadline is lost, not extended.
 * @throws the hold's LockLostError when it is (or turns out) lost; IllegalMonitorStateError(`notHeld`) when released
 */
export async function extendHold(
  ctx: EngineContext,
  hold: Hold,
  leaseMs: number,
  store: { extend(hold: Hold, leaseMs: number): Promise<'renewed' | 'gone' | 'taken'> },
  notHeld: string,
): Promise<void> {
  if (hold.expired) hold.lose('expired');
  if (!hold.active) throw hold.lostError ?? new IllegalMonitorStateError(notHeld);
  ctx.assertOpen();
  await ctx.chains.run(hold.key, hold.owner, async () => {
    const sentAt = monotonicNow();
    const verdict = await store.extend(hold, leaseMs);
    if (verdict === 'renewed') hold.extendTo(sentAt, leaseMs);
    else hold.lose(verdict === 'gone' ? 'expired' : 'taken');
  });
  if (!hold.active) throw hold.endedError();
}
