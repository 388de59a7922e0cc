// Where the semaphores and the latch still import the observed acquire and release from; the lock imports them from
// acquire.ts and release.ts, where they live.
export { acquireObserved, type AcquireLabel } from './acquire.js';
export { releaseTraced } from './release.js';
