import { replicated } from '../../connection/deployment.js';
import { isOne, ObjectStore } from '../object-store.js';
import { SCRIPTS } from '../scripts.generated.js';
import type { LatchKeys } from './keys.js';

const asNumber = (reply: unknown): number => Number(reply ?? 0);
/**
 * With syncReplicas both writes resolve once enough replicas have them. They
 * cannot be undone (awaiters may already have seen them), so too few
 * acknowledgements reject with RedisUnavailableError after the write: the
 * caller learns that a failover now could lose it.
 */
const always = (): boolean => true;

/** The latch's protocol on one deployment: two scripts (each with its op's marker) and one read. */
export class LatchStore extends ObjectStore {
  trySetCount(keys: LatchKeys, marker: string, count: number): Promise<boolean> {
    const reply = this.transport.run(
      SCRIPTS.latchTrySetCount,
      { count: keys.count, marker, initialCount: count, replayWindowMs: this.replayWindowMs },
      'trySetCount',
      keys.count,
      isOne,
    );
    return replicated(this.deployment, keys.count, reply, always);
  }

  /** Counts down once; resolves the count left. */
  countDown(keys: LatchKeys, marker: string): Promise<number> {
    const reply = this.transport.run(
      SCRIPTS.latchCountDown,
      { count: keys.count, marker, replayWindowMs: this.replayWindowMs, sharded: this.sharded, channel: keys.channel },
      'countDown',
      keys.count,
      asNumber,
    );
    return replicated(this.deployment, keys.count, reply, always);
  }

  count(keys: LatchKeys): Promise<number> {
    return this.transport.call('get', [keys.count], 'GET', keys.count, asNumber);
  }
}
