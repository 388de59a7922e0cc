import type { ObjectInfoBase } from '../inspect/info.js';

/** A count-down latch (`getCountDownLatch`): its remaining count. A latch at zero has no key. */
export interface CountDownLatchInfo extends ObjectInfoBase {
  /** The kind: a count-down latch. */
  readonly kind: 'countDownLatch';
  /** The remaining count. */
  readonly count: number;
}
