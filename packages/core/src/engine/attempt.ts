// The attempt: one try of an acquisition (send, deadline, a late or unwanted grant undone, cancel), in the owner's turn.
import { ClientClosedError, RedisUnavailableError } from '../errors.js';
import type { EngineContext } from './engine-context.js';
import { monotonicNow } from '../connection/time.js';
import { wasNotSent } from '../connection/transport.js';
import { withinMs } from '../connection/bounded-call.js';

/** What one acquire call answered, as the object reads it. */
export type AcquireReply<G = unknown> =
  | {
      readonly granted: true;
      /** The hold's fencing token (undefined where there is none). */
      readonly token: string | undefined;
      /** The owner's count in Redis after the call; undefined when counted here (only first and last reach Redis). */
      readonly count: number | undefined;
      /** The object's own data about the grant (Redlock: each master's token). */
      readonly grant?: G;
    }
  | {
      readonly granted: false;
      /** How long to wait at most before trying again (the holder's TTL; −1: no TTL). */
      readonly retryInMs: number;
      /** Who holds it, where the reply says. */
      readonly holder?: string;
      /** Why nothing could be granted when Redis is why (Redlock: no majority answered); a timeout's cause. */
      readonly failure?: Error;
    };

/**
 * What one try of an acquisition found: the object's grant (a leased hold, a permit count, "open"), or when to try again
 * (with the failure that refused it, when Redis, not a holder, is why).
 */
export type TryOutcome<G> = { readonly grant: G } | { readonly retryInMs: number; readonly failure?: Error };

/** One kind of try for {@link attempt}: what it sends, how it is undone, and what a reply grants. */
export interface AttemptSpec<R, G> {
  /** The turn the try takes: operations of `owner` on `key` go out one at a time. */
  readonly key: string;
  readonly owner: string;
  send(op: string): Promise<R>;
  /** Cancels the acquire `op`, whether it ran, will run late, or never arrives. */
  undo(op: string): Promise<unknown>;
  /** How long to wait before trying again when `reply` granted nothing; undefined when it granted. */
  refusal(reply: R): number | undefined;
  /** The failure behind a refusal, when Redis is why (no majority answered); absent: refusals are contention. */
  failure?(reply: R): Error | undefined;
  /** Whether a grant sent at `sentAt` comes too late to be counted on (a lease past lease − drift); absent: grants do not expire. */
  late?(sentAt: number): boolean;
  /** The grant of `reply`, recorded: called only once it counts (in time, nobody gave up). */
  keep(reply: R, sentAt: number): G;
}

/**
 * One acquire call, timed from before the send; undone when the grant came too late, the caller aborted, the client closed,
 * or no answer came (it may still run). The undo goes in the owner's turn, so nothing of the owner lands between the two.
 */
export function attempt<R, G>(ctx: EngineContext, spec: AttemptSpec<R, G>, signal: AbortSignal | undefined): Promise<TryOutcome<G>> {
  try {
    ctx.assertOpen();
    signal?.throwIfAborted();
  } catch (error) {
    return Promise.reject(error);
  }
  const op = ctx.newOpId();
  // Not async: an uncontended try is the send and one reaction to its reply.
  const turn = ctx.chains.enter(spec.key, spec.owner);
  return turn ? turn.then(() => sendInTurn(ctx, spec, signal, op)) : sendInTurn(ctx, spec, signal, op);
}

/** {@link attempt}'s send and its reply's reading, in the owner's turn (left once the reply, or the undo, is handled). */
function sendInTurn<R, G>(ctx: EngineContext, spec: AttemptSpec<R, G>, signal: AbortSignal | undefined, op: string): Promise<TryOutcome<G>> {
  const sentAt = monotonicNow();
  let sending: Promise<R>;
  try {
    sending = spec.send(op);
  } catch (error) {
    sending = Promise.reject(error);
  }
  return sending.then(
    (reply) => {
      let outcome: TryOutcome<G>;
      try {
        const retryInMs = spec.refusal(reply);
        const failure = retryInMs === undefined ? undefined : spec.failure?.(reply);
        if (retryInMs !== undefined) outcome = failure === undefined ? { retryInMs } : { retryInMs, failure };
        else if (signal?.aborted || ctx.closed || spec.late?.(sentAt)) return undoInTurn(ctx, spec, signal, op);
        else outcome = { grant: spec.keep(reply, sentAt) };
      } catch (error) {
        ctx.chains.leave(spec.key, spec.owner);
        throw error;
      }
      ctx.chains.leave(spec.key, spec.owner);
      return outcome;
    },
    (error: unknown) => {
      // No answer: the acquire may still run; the undo goes out behind it on the same connection.
      if (error instanceof RedisUnavailableError && !wasNotSent(error)) void undo(ctx, spec, op);
      ctx.chains.leave(spec.key, spec.owner);
      throw error;
    },
  );
}

/**
 * A grant nobody counts on (late, aborted, closed), undone before the owner's turn is left; an undo Redis does not answer
 * within commandTimeoutMs goes on in the background, so the owner's next call fails in bounded time rather than wait for it.
 */
async function undoInTurn<R, G>(ctx: EngineContext, spec: AttemptSpec<R, G>, signal: AbortSignal | undefined, op: string): Promise<TryOutcome<G>> {
  try {
    await withinMs(undo(ctx, spec, op), ctx.commandTimeoutMs, () => undefined).catch(() => undefined);
  } finally {
    ctx.chains.leave(spec.key, spec.owner);
  }
  signal?.throwIfAborted();
  if (ctx.closed) throw new ClientClosedError();
  return { retryInMs: 1 };
}

/**
 * Retried until Redis answers it (or the client closes), soonest once the connection is back. Not bounded from the send: an
 * acquire parked in ioredis's offline queue runs when the connection is back and its lease starts then; this undo, sent after
 * it on the same connection, is what ends that grant (or tombstones the op, if it comes first). A semaphore's permits are
 * unowned, so a lost undo would lose them for good.
 */
function undo(ctx: EngineContext, spec: AttemptSpec<unknown, unknown>, op: string): Promise<void> {
  return retryUntilAnswered(ctx, () => spec.undo(op));
}

/** Sends `send`, then again with growing delays, until Redis answers it or the client closes; a failure it ends on is reported. */
export function retryUntilAnswered(ctx: EngineContext, send: () => Promise<unknown>): Promise<void> {
  let failure: unknown;
  const once = (): Promise<boolean> =>
    send().then(
      () => {
        failure = undefined;
        return true;
      },
      (error: unknown) => {
        failure = error;
        return !(error instanceof RedisUnavailableError);
      },
    );
  const plan = { until: Number.POSITIVE_INFINITY, minDelayMs: Math.min(50, ctx.commandTimeoutMs), maxDelayMs: ctx.commandTimeoutMs };
  return ctx.background.retry(once, plan).then(() => {
    if (failure !== undefined) ctx.backgroundError(failure);
  });
}
