import { bareIntegerKind } from '../object-kind.js';
import { RedisSemaphore } from './semaphore.js';
import { SemaphoreStore } from './semaphore-store.js';
import type { RSemaphore } from './types.js';

/** The semaphore (`getSemaphore`). */
export const SEMAPHORE = bareIntegerKind(
  'semaphore',
  'permits',
  'semaphore name',
  (name, { deployment, context }): RSemaphore => new RedisSemaphore(name, context, new SemaphoreStore(deployment, context.commandTimeoutMs)),
);
