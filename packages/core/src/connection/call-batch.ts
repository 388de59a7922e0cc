import { RedisUnavailableError } from '../errors.js';
import { toRLockError } from './bounded-call.js';
import { unavailableError } from './down-tracker.js';
import type { EmbeddedScript, ScriptArg } from './scripts.js';

/**
 * A script and its batch form, which runs it once per item (lock/acquireBatch.lua beside lock/acquire.lua) and takes
 * the arguments it names `shared` once for all items: calls are batched together only when those agree.
 */
export interface BatchedScript<A> {
  readonly single: EmbeddedScript<A>;
  /** Takes `items` (each an `A`) and the `shared` fields of `A`; the transport builds that from the calls. */
  readonly batch: EmbeddedScript<never>;
}

/**
 * True when a call of `script` with `args` on `slot` joins `batch`: same script and slot, and the batch's shared arguments
 * agree (compared with its first call's, not through a key string: building one cost every queued call a string and its hash).
 */
export function joins(batch: CallBatch, script: BatchedScript<unknown>, args: unknown, slot: number | undefined): boolean {
  if (batch.script !== script || batch.slot !== slot) return false;
  const first = (batch.calls[0] as QueuedCall).args as Record<string, unknown>;
  for (const name of script.batch.shared ?? []) if (first[name] !== (args as Record<string, unknown>)[name]) return false;
  return true;
}

/** The batch form's arguments for `calls` (one queue's): the shared ones from the first call, then each call's. */
export function batchArgs(script: BatchedScript<unknown>, calls: readonly QueuedCall[]): ScriptArg[] {
  const named: Record<string, unknown> = { items: calls.map((call) => call.args) };
  const first = (calls[0] as QueuedCall).args as Record<string, unknown>;
  for (const name of script.batch.shared ?? []) named[name] = first[name];
  return script.batch.args(named as never);
}

/** One call waiting to go out in a batch: its own arguments, reply parser, deadline and promise. */
export interface QueuedCall {
  readonly args: unknown;
  readonly what: string;
  readonly key: string;
  readonly parse: (reply: unknown) => unknown;
  readonly deadline: number;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
}

/** The calls queued for one batch script on one server and slot, in the order they were made. */
export interface CallBatch {
  readonly script: BatchedScript<unknown>;
  /** A Cluster's hash slot of the batch's keys; undefined on one server. */
  readonly slot: number | undefined;
  calls: QueuedCall[];
  /** Sent or failed: no longer queued. */
  gone: boolean;
}

const NO_CALLS: QueuedCall[] = [];

/** A batch's calls as it leaves its queue (sent or failed): it is marked gone and emptied, so what still points at it keeps none of them. */
export function takeCalls(batch: CallBatch): QueuedCall[] {
  const { calls } = batch;
  batch.gone = true;
  batch.calls = NO_CALLS;
  return calls;
}

/** Most calls in one batch, sent as soon as it is full: a script runs alone on the server, so its length bounds others' wait. */
export const MAX_BATCH_CALLS = 16;

/** Each call's reply of a batch's (one per item, in order): an error item fails its call only. */
export function answerEach(calls: readonly QueuedCall[], replies: unknown): void {
  if (!Array.isArray(replies) || replies.length !== calls.length) {
    const error = new Error(`a batch of ${calls.length} answered ${Array.isArray(replies) ? replies.length : typeof replies}`);
    for (const call of calls) call.reject(toRLockError(error, call.what, call.key));
    return;
  }
  calls.forEach((call, index) => {
    const reply: unknown = replies[index];
    if (reply instanceof Error) return call.reject(toRLockError(reply, call.what, call.key));
    try {
      call.resolve(call.parse(reply));
    } catch (error) {
      call.reject(toRLockError(error, call.what, call.key));
    }
  });
}

/**
 * Each call's failure when its whole batch failed: an error reply as the batch's (it ran for none), the transport's own
 * failures (no answer in time, connection down) said of each call, keeping whether it was sent.
 */
export function failEach(calls: readonly QueuedCall[], error: unknown, timeoutMs: number, notSent: (error: Error) => Error): void {
  for (const call of calls) {
    if (!(error instanceof RedisUnavailableError)) call.reject(toRLockError(error, call.what, call.key));
    else if (error.cause instanceof Error) call.reject(notSent(unavailableError(call.what, call.key, error.cause)));
    else call.reject(notSent(new RedisUnavailableError(`Redis did not answer ${call.what} on "${call.key}" within ${timeoutMs} ms`)));
  }
}
