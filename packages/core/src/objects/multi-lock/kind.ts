import type { RLock } from '../lock/types.js';
import { defineComposite } from '../object-kind.js';
import { MultiLock } from './multi-lock.js';

/** The multi-lock: all or nothing over locks of any kind and client, measured with its client's telemetry. */
export const MULTI_LOCK = defineComposite({
  name: 'multiLock',
  description: 'all-or-nothing lock over locks',
  method: 'getMultiLock',
  getter:
    ({ context }) =>
    (locks: readonly RLock<string | undefined>[]): MultiLock =>
      new MultiLock(locks, context.telemetry),
});
