// rlock's `node:diagnostics_channel` channels, for APM agents without the OpenTelemetry API (as undici and node-redis do).
// Each is published only while it has subscribers, so without one the cost is a property read.
import { channel, tracingChannel } from 'node:diagnostics_channel';

/** Context of a traced acquisition or release (`rlock:acquire`, `rlock:release`); Node adds `result` or `error`. */
export interface LockChannelContext {
  /** The object kind, as the metrics' `rlock.object` attribute: `lock`, `fair_lock`, `semaphore`… */
  readonly object: string;
  /** The object's name as the user gave it. */
  readonly name: string;
  /** The owner `<clientId>:<taskId>` (a semaphore: the waiting call's id). */
  readonly owner: string | undefined;
}

/** Message of `rlock:lease-lost`: a hold was lost (any reason, `closed` and `forced` included). */
export interface LeaseLostMessage {
  /** The object kind when the hold was taken while something listened; else undefined. */
  readonly object: string | undefined;
  /** The object's name as the user gave it. */
  readonly name: string;
  /** The hold's owner, `<clientId>:<taskId>` (a permit: its id). */
  readonly owner: string;
  /** The hold's fencing token (undefined where there is none, as on Redlock). */
  readonly token: string | undefined;
  /** Why: as the `lockLost` event's reason (`expired`, `taken`, `unreachable`, `maxLease`, `closed`, `forced`). */
  readonly reason: string;
  /** The LockLostError the hold's signal aborted with. */
  readonly error: Error;
}

/** Message of `rlock:renewal`: one renewal batch call ended. */
export interface RenewalMessage {
  /** Holds in the batch. */
  readonly count: number;
  /** `ok`: the call answered (some holds may have been found gone: see `rlock:lease-lost`); `error`: it failed as a whole. */
  readonly outcome: 'ok' | 'error';
  /** How long the call took, in ms. */
  readonly durationMs: number;
  /** The failure, when `outcome` is `error`. */
  readonly error?: unknown;
}

/** `rlock:acquire`: one acquisition call, from the call to its outcome (`result`: the grant, or undefined when not acquired). */
export const acquireChannel = tracingChannel<unknown, LockChannelContext>('rlock:acquire');
/** `rlock:release`: one release of a hold. */
export const releaseChannel = tracingChannel<unknown, LockChannelContext>('rlock:release');
/** `rlock:lease-lost`: see {@link LeaseLostMessage}. */
export const leaseLostChannel = channel('rlock:lease-lost');
/** `rlock:renewal`: see {@link RenewalMessage}. */
export const renewalChannel = channel('rlock:renewal');
