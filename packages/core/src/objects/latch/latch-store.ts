import { isOne, ObjectStore } from '../object-store.js';
import { SCRIPTS } from '../scripts.generated.js';
import type { LatchKeys } from './keys.js';

/** With syncReplicas a latch write cannot be undone (awaiters may have seen it): too few acks reject after it. */
const always = (): boolean => true;

export class LatchStore extends ObjectStore {
  trySetCount(keys: LatchKeys, marker: string, count: number): Promise<boolean> {
    const args = { count: keys.count, marker, kind: keys.kind, initialCount: count, replayWindowMs: this.replayWindowMs };
    return this.write(SCRIPTS.latchTrySetCount, args, 'trySetCount', keys.count, isOne, always);
  }

  countDown(keys: LatchKeys, marker: string): Promise<number> {
    const args = { count: keys.count, marker, kind: keys.kind, replayWindowMs: this.replayWindowMs, sharded: this.sharded, channel: keys.channel };
    return this.write(SCRIPTS.latchCountDown, args, 'countDown', keys.count, Number, always);
  }

  count(keys: LatchKeys): Promise<number> {
    return this.transport.call('get', [keys.count], 'GET', keys.count, Number);
  }
}
