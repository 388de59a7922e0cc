import { bareIntegerKind } from '../object-kind.js';
import { CountDownLatch } from './count-down-latch.js';
import { LatchStore } from './latch-store.js';
import type { RCountDownLatch } from './types.js';

/** The count-down latch (`getCountDownLatch`). */
export const COUNT_DOWN_LATCH = bareIntegerKind(
  'countDownLatch',
  'count',
  'latch name',
  (name, { deployment, context }): RCountDownLatch => new CountDownLatch(name, context, new LatchStore(deployment, context.commandTimeoutMs)),
);
