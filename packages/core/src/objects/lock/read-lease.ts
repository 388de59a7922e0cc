import type { Deployment } from '../../connection/deployment.js';
import { boundedCall, toRLockError } from '../../connection/bounded-call.js';

/**
 * A lock key's holder value and its PTTL, read atomically (MULTI), so the TTL
 * is that holder's: hash field `field` of the key (the reentrant lock), or the
 * whole string when `field` is undefined (a lease lock).
 */
export async function readValueAndPttl(
  deployment: Deployment,
  timeoutMs: number,
  key: string,
  field?: string,
): Promise<{ value: string | undefined; pttlMs: number }> {
  const read = (): Promise<[Error | null, unknown][] | null> => {
    const multi = deployment.redis.multi();
    return (field === undefined ? multi.get(key) : multi.hget(key, field)).pttl(key).exec();
  };
  const replies = await boundedCall(read, timeoutMs, 'a read', key);
  const [value, pttl] = replies ?? [];
  const failure = !value || !pttl ? new Error('the transaction was discarded') : (value[0] ?? pttl[0]);
  if (failure) throw toRLockError(failure, 'a read', key);
  return { value: typeof value?.[1] === 'string' ? value[1] : undefined, pttlMs: Number(pttl?.[1]) };
}
