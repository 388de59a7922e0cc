import { integerValue, markedBareInteger } from '../inspect/snapshot.js';
import { byName, defineKind } from '../object-kind.js';
import { CountDownLatch } from './count-down-latch.js';
import type { CountDownLatchInfo } from './info.js';
import { latchKeys } from './keys.js';
import { LatchStore } from './latch-store.js';
import type { RCountDownLatch } from './types.js';

/** The count-down latch (`getCountDownLatch`): a bare integer, as a semaphore's permits, told apart by its kind marker. */
export const COUNT_DOWN_LATCH = defineKind({
  name: 'countDownLatch',
  description: 'count that opens at zero',
  method: 'getCountDownLatch',
  getter: (site) => {
    const { deployment, context } = site;
    return byName(site, 'latch name', (name): RCountDownLatch => new CountDownLatch(name, context, new LatchStore(deployment, context.commandTimeoutMs)));
  },
  keeps: (prefix, name) => {
    const keys = latchKeys(prefix, name);
    return { count: { key: keys.count, type: 'string' }, marker: { key: keys.kind, type: 'string' } };
  },
  recognise: ({ keys: { count, marker } }) => markedBareInteger(count, marker, 'countDownLatch'),
  describe: ({ keys: { count } }, base): CountDownLatchInfo => ({
    ...base,
    kind: 'countDownLatch',
    holders: [],
    holderCount: 0,
    count: integerValue(count) ?? 0,
  }),
  detail: (info) => `count ${info.count}`,
});
