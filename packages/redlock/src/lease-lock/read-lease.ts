import { boundedCall, toRLockError, type Deployment } from '@org/rlock-core/internal';

/** A lock key's value and PTTL, read atomically (MULTI), so the TTL is that holder's. */
export async function readValueAndPttl(deployment: Deployment, timeoutMs: number, key: string): Promise<{ value: string | undefined; pttlMs: number }> {
  const read = (): Promise<[Error | null, unknown][] | null> => deployment.redis.multi().get(key).pttl(key).exec();
  const replies = await boundedCall(read, timeoutMs, 'a read', key);
  const [value, pttl] = replies ?? [];
  const failure = !value || !pttl ? new Error('the transaction was discarded') : (value[0] ?? pttl[0]);
  if (failure) throw toRLockError(failure, 'a read', key);
  return { value: typeof value?.[1] === 'string' ? value[1] : undefined, pttlMs: Number(pttl?.[1]) };
}
