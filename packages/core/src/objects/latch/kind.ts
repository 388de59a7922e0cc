import { bareIntegerReport } from '../inspect/snapshot.js';
import { byName, defineKind } from '../object-kind.js';
import { CountDownLatch } from './count-down-latch.js';
import { LatchStore } from './latch-store.js';
import type { RCountDownLatch } from './types.js';

/** The count-down latch (`getCountDownLatch`). */
export const COUNT_DOWN_LATCH = defineKind({
  ...bareIntegerReport('countDownLatch', 'count'),
  getter: (site) => byName(site, 'latch name', (name): RCountDownLatch => new CountDownLatch(name, site.context, new LatchStore(site.deployment, site.context.commandTimeoutMs))),
});
