// The engine's acquire, release and renewal, observed: every object kind is instrumented here once.
import { acquireChannel, releaseChannel, type LockChannelContext } from '../observability/channels.js';
import { acquireOrWait } from './acquire.js';
import type { WaitSpec } from './wait-spec.js';
import type { EngineContext } from './engine-context.js';
import type { Hold } from './hold.js';
import { releaseHold, type ReleaseSpec } from './release.js';
import type { RenewalBackend } from './renewal.js';

/** How an observed acquisition is labelled: its object kind, and what "no grant by waitMs" means for the call. */
export interface AcquireLabel {
  /** `rlock.object`: `lock`, `fair_lock`, `read_lock`, `semaphore`… */
  readonly object: string;
  /** A call that answers false (tryLock, tryAcquire, a latch's await): `not_acquired`; one that throws LockAcquireTimeoutError: `timeout`. */
  readonly refusal: 'not_acquired' | 'timeout';
}

/** {@link acquireOrWait}, observed: `rlock.acquire.duration`, `rlock.waiters.active`, the `rlock.acquire` span and channel, and the hold's tracking. */
export function acquireObserved<G>(ctx: EngineContext, spec: WaitSpec<G>, label: AcquireLabel): Promise<G | undefined> {
  const probe = ctx.telemetry.startAcquire(label.object, spec.name, spec.id, label.refusal, spec.signal);
  const traced = acquireChannel.hasSubscribers;
  if (probe === undefined && !traced) return acquireOrWait(ctx, spec);
  // The spec is the caller's own literal, made for this call: setting the watch on it spares copying a dozen fields.
  if (probe !== undefined) spec.watch = probe;
  return traced
    ? acquireChannel.tracePromise(() => acquireOrWait(ctx, spec), { object: label.object, name: spec.name, owner: spec.id } satisfies LockChannelContext)
    : acquireOrWait(ctx, spec);
}

/** {@link releaseHold}, traced on `rlock:release` while it has subscribers. */
export function releaseTraced(ctx: EngineContext, object: string, hold: Hold | undefined, name: string, spec: ReleaseSpec): Promise<void> {
  if (!releaseChannel.hasSubscribers) return releaseHold(ctx, hold, name, spec);
  return releaseChannel.tracePromise(() => releaseHold(ctx, hold, name, spec), { object, name, owner: hold?.owner } satisfies LockChannelContext);
}

/** The client's renewal backend, each batch call timed (`rlock.renewal.duration`, `rlock:renewal`). */
export function observedRenewals(backend: RenewalBackend, ctx: EngineContext): RenewalBackend {
  return {
    maxBatch: backend.maxBatch,
    batchKey: (hold) => backend.batchKey(hold),
    renew: (holds) => {
      const end = ctx.telemetry.startRenewal(holds.length);
      if (end === undefined) return backend.renew(holds);
      return backend.renew(holds).then(
        (outcomes) => {
          end('ok');
          return outcomes;
        },
        (error: unknown) => {
          end('error', error);
          throw error;
        },
      );
    },
  };
}
