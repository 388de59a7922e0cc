import { fenceKey, objectKey } from '../names.js';

/**
 * The Redis names of one reentrant lock (public layout, see the core README).
 * Built once per lock object, not per call.
 */
export interface LockKeys {
  /** Hash `<prefix>:{<name>}` with fields owner, count, token, op. */
  readonly lock: string;
  /** String `<prefix>:{<name>}:released`: op id of the last full release (replay window). */
  readonly released: string;
  /** Channel `<prefix>:{<name>}:release`: 'unlock' or 'force' on each full release. */
  readonly channel: string;
  /** String `<prefix>:{<slot tag>}:fence`: last fencing token of the lock's hash slot. */
  readonly fence: string;
  /** Prefix of the tombstones `<prefix>:{<name>}:cancelled:<op>` left by a cancelled acquire. */
  readonly cancelledPrefix: string;
}

export function lockKeys(prefix: string, name: string): LockKeys {
  const lock = objectKey(prefix, name);
  return {
    lock,
    released: `${lock}:released`,
    channel: `${lock}:release`,
    fence: fenceKey(prefix, lock),
    cancelledPrefix: `${lock}:cancelled:`,
  };
}
