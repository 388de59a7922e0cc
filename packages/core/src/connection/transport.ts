import type { Writable } from 'node:stream';
import { Command, type Cluster, type Redis } from 'ioredis';
import calculateSlot from 'cluster-key-slot';
import { RedisUnavailableError } from '../errors.js';
import { DownTracker, unavailableError } from './down-tracker.js';
import { PUBLISH_REFUSED, type EmbeddedScript, type PublishRefusedListener, type ScriptArg } from './scripts.js';
import { toRLockError } from './bounded-call.js';
import { monotonicNow } from './time.js';
import type { WorkCounter } from './process-refs.js';
import { answerEach, batchArgs, failEach, joins, MAX_BATCH_CALLS, takeCalls, type BatchedScript, type CallBatch, type QueuedCall } from './call-batch.js';

/** Replies as strings (ioredis's Commander methods do the same), read only by Command: shared by every call. */
const UTF8_REPLIES = Object.freeze({ replyEncoding: 'utf8' as const });

/** Each command is made without args, set after as strings: ioredis's constructor would copy them through `flat()`, its costliest step. */
const NO_ARGS: readonly never[] = Object.freeze([]);

/** Commands written together at most; a larger batch is flushed at once, so the server starts on it. */
const MAX_BATCH = 16;

/**
 * Unanswered calls (this one included) up to which a call is written at once rather than corked for the turn:
 * a few calls in flight keep Redis busy while the client prepares the next ones; past them, what queues goes
 * out as one write per turn. (S1, one sitting against 4: 2 loses a fifth to a third at 8-64 tasks; 6 or 8 gain a
 * sixth at 16 tasks but lengthen the 64-task p99 by a fifth or more and send more calls alone, each costing Redis more.)
 */
const WRITE_THROUGH = 4;

/** Open batches a queued call looks through for its own, newest first (see `queueFor`). */
const SCANNED_BATCHES = 8;

/** Keys whose last queue is remembered at most (see `queuedKeys`). */
const MAX_TRACKED_KEYS = 4096;

type Corkable = Pick<Writable, 'cork' | 'uncork' | 'writable'>;

/** The writable streams of a ready connection, or of a Cluster's ready masters; none while connecting. */
function streamsOf(redis: Redis | Cluster): readonly Corkable[] {
  if (redis.status !== 'ready') return [];
  if (!redis.isCluster) return (redis as Redis).stream?.writable ? [(redis as Redis).stream] : [];
  return (redis as Cluster).nodes('master').flatMap((node) => (node.status === 'ready' && node.stream?.writable ? [node.stream] : []));
}

interface Pending {
  readonly command: Command;
  /** A batch's calls, answered each from its reply. */
  readonly calls?: readonly QueuedCall[];
  readonly deadline: number;
  readonly what: string;
  readonly key: string;
  done: boolean;
}

/**
 * rlock's way to one connection: a call written at once while few are unanswered, else a turn's commands corked into one write
 * (auto-pipelining would move tasks in lockstep), one timer for
 * every call since replies come in order, NOSCRIPT retried as EVAL. A timed-out call may still run later, hence op ids.
 */
export class Transport {
  /** The streams corked for this turn's batch: the connection's, or each ready master's of a Cluster. */
  private corked: readonly Corkable[] | undefined;
  private batchLimit = MAX_BATCH;
  private batched = 0;
  private flushScheduled = false;
  private readonly pending: Pending[] = [];
  /** Calls of batch scripts that queued behind the calls in flight, a batch per script, slot and shared arguments, in the order they were made (few: looked through). */
  private batches: CallBatch[] = [];
  /** The queue of each queued call's key: a call on a key queued in another queue sends the queued calls first. */
  private readonly queuedKeys = new Map<string, CallBatch>();
  private queuedCalls = 0;
  private head = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Calls fail at once while the connection is down (refused, reset…); pending ones when it goes down. */
  private readonly down: DownTracker;
  /** Told when the first call goes out and when the last is answered (not per call). */
  calls: WorkCounter | undefined;
  /** Told when a script's announcement was refused (the script went on: its reply and writes stand). */
  publishRefused: PublishRefusedListener | undefined;

  constructor(
    /** One connection, or a Cluster (each command routed to its slot's node): corked per batch either way. */
    readonly redis: Redis | Cluster,
    readonly timeoutMs: number,
    /** Every script this connection may run: loaded on each connect, before anything else. */
    private readonly scripts: readonly EmbeddedScript[],
    /** Batch each turn's commands into one write; false for a Redlock master, whose rounds wait on the slowest of a majority. */
    private readonly batching = true,
  ) {
    this.down = new DownTracker(redis, (cause) => this.failPending(cause));
    redis.on('ready', () => this.loadScripts());
    if (redis.status === 'ready') this.loadScripts();
  }

  private failPending(cause: Error): void {
    for (let index = this.head; index < this.pending.length; index++) {
      const entry = this.pending[index] as Pending;
      if (!entry.done) entry.command.reject(unavailableError(entry.what, entry.key, cause));
    }
    // Queued calls never left: they cannot run later.
    const queued = this.batches;
    this.batches = [];
    for (const batch of queued) {
      const calls = takeCalls(batch);
      this.dequeued(calls.length);
      const first = calls[0] as QueuedCall;
      failEach(calls, notSent(unavailableError(first.what, first.key, cause)), this.timeoutMs, notSent);
    }
  }

  private loadScripts(): void {
    for (const script of this.scripts) {
      // A failure shows up as NOSCRIPT on first use, answered by EVAL.
      const command = new Command('script', ['LOAD', script.lua]);
      command.promise.catch(() => undefined);
      this.redis.sendCommand(command);
    }
  }

  /** Sends one command; rejects with RedisCommandError (error reply) or RedisUnavailableError. */
  call<T>(name: string, args: (string | number)[], what: string, key: string, parse: (reply: unknown) => T): Promise<T> {
    return this.answer(this.send(name, args, what, key), parse, undefined, undefined);
  }

  /** Runs `script` with its KEYS and ARGV by name: its `args` puts them in its header's order. */
  run<A, T>(script: EmbeddedScript<A>, args: NoInfer<A>, what: string, key: string, parse: (reply: unknown) => T): Promise<T> {
    return this.script(script, script.args(args), what, key, parse);
  }

  /**
   * Runs `script.single` with `args`, or, while WRITE_THROUGH calls are unanswered, queues it: the calls of one batch
   * script, slot and shared arguments go as one call of `script.batch` once MAX_BATCH_CALLS queued or at the end of the
   * turn, each with its own reply, error and deadline (counted from now). A lone call goes at once, as `run` sends it.
   */
  coalesced<A, T>(script: BatchedScript<A>, args: NoInfer<A>, what: string, key: string, parse: (reply: unknown) => T): Promise<T> {
    if (!this.batching || this.down.cause || (this.queuedCalls === 0 && this.pending.length - this.head < WRITE_THROUGH)) {
      return this.run(script.single, args, what, key, parse);
    }
    // Standalone: one queue per script; a Cluster's per slot, since a script's keys must share one.
    const slot = this.redis.isCluster ? calculateSlot(key) : undefined;
    let batch = this.queueFor(script as BatchedScript<unknown>, args, slot);
    // Calls on one key run in the order made: one still queued in another queue (a release before this acquire) goes first.
    const earlier = this.queuedKeys.get(key);
    if (earlier !== undefined && !earlier.gone && earlier !== batch) {
      this.sendBatches();
      batch = undefined;
    }
    // Entries outlive their batch (gone), so the map is not rebuilt every turn; past MAX_TRACKED_KEYS it starts again, nothing queued.
    if (earlier === undefined && this.queuedKeys.size >= MAX_TRACKED_KEYS) {
      this.sendBatches();
      this.queuedKeys.clear();
      batch = undefined;
    }
    if (batch === undefined) this.batches.push((batch = { script: script as BatchedScript<unknown>, slot, calls: [], gone: false }));
    this.queuedKeys.set(key, batch);
    const { calls } = batch;
    // Only queued behind unanswered calls, so the work counter was entered already.
    this.queuedCalls++;
    this.scheduleFlush();
    const answer = new Promise<T>((resolve, reject) => {
      calls.push({ args, what, key, parse, deadline: monotonicNow() + this.timeoutMs, resolve: resolve as (value: unknown) => void, reject });
    });
    // A full batch goes at once: Redis starts on it while the turn queues the next (64 tasks, one sitting: as many
    // pairs/s as sending each call alone, where holding every batch to the turn's end lost a fifth).
    if (calls.length >= MAX_BATCH_CALLS) {
      this.batches.splice(this.batches.indexOf(batch), 1);
      this.sendBatch(batch.script, takeCalls(batch));
      this.dequeued(calls.length);
    }
    return answer;
  }

  /**
   * The open batch a call of `script` with `args` on `slot` joins, if any: the latest SCANNED_BATCHES, newest first, as the
   * turn's calls mostly join one of them. Bounded: a Cluster's calls on distinct slots open a batch each, and looking through
   * every one would cost a turn of N calls N² steps; a call that finds none opens a batch of its own, sent with the others.
   */
  private queueFor(script: BatchedScript<unknown>, args: unknown, slot: number | undefined): CallBatch | undefined {
    const oldest = Math.max(0, this.batches.length - SCANNED_BATCHES);
    for (let index = this.batches.length - 1; index >= oldest; index--) {
      const batch = this.batches[index] as CallBatch;
      if (joins(batch, script, args, slot)) return batch;
    }
    return undefined;
  }

  /** Sends every queued batch as one call (a call of one: its script alone); none is longer than MAX_BATCH_CALLS, sent once full. */
  private sendBatches(): void {
    if (this.queuedCalls === 0) return;
    // Cleared first: a batch of one is sent through `send`, which calls back here and must find nothing queued.
    const batches = this.batches;
    this.batches = [];
    for (const batch of batches) {
      const calls = takeCalls(batch);
      this.sendBatch(batch.script, calls);
      this.dequeued(calls.length);
    }
  }

  /** Counts `count` queued calls gone (sent or failed); the work counter is left when nothing is queued or pending. */
  private dequeued(count: number): void {
    this.queuedCalls -= count;
    if (this.queuedCalls === 0 && this.head === this.pending.length) this.calls?.leave();
  }

  private sendBatch(script: BatchedScript<unknown>, calls: QueuedCall[]): void {
    const first = calls[0] as QueuedCall;
    if (calls.length === 1) {
      this.run(script.single, first.args as never, first.what, first.key, first.parse).then(first.resolve, first.reject);
      return;
    }
    const keysAndArgs = batchArgs(script, calls);
    // Its reply and its failure are its calls' (see answer): the answer itself settles with nothing, and never rejects.
    void this.answer(
      this.send('evalsha', scriptArgs(script.batch.sha, script.batch, keysAndArgs), first.what, first.key, calls),
      parseBatch,
      script.batch,
      keysAndArgs,
    );
  }

  /** Runs `script` with `keysAndArgs` positionally (KEYS first; a `-n` script takes the key count first). */
  script<T>(script: EmbeddedScript, keysAndArgs: ScriptArg[], what: string, key: string, parse: (reply: unknown) => T): Promise<T> {
    // The reply's reading and the EVAL after a NOSCRIPT are the answer's, from these: no closure of their own per call.
    return this.answer(this.send('evalsha', scriptArgs(script.sha, script, keysAndArgs), what, key), parse, script, keysAndArgs);
  }

  /** The script's own reply; a refused announcement in it is reported, not thrown: the script's writes stand. */
  private unwrapRefusal(reply: unknown, what: string, key: string): unknown {
    if (!Array.isArray(reply) || reply[0] !== PUBLISH_REFUSED) return reply;
    this.publishRefused?.(String(reply[1]), what, key);
    // A nil reply ends the table in Lua: a reply of 2 elements had none.
    const inner: unknown = reply.length > 2 ? reply[2] : null;
    if (inner instanceof Error) throw toRLockError(inner, what, key);
    return inner;
  }

  /**
   * `entry`'s reply parsed (a script's unwrapped first), or its typed error; a batch's reply and failure go to each of its calls.
   * A NOSCRIPT error of an EVALSHA (`keysAndArgs` given) is answered by EVAL, which loads the script into the server's cache for the next EVALSHA.
   */
  private answer<T>(entry: Pending, parse: (reply: unknown) => T, script: EmbeddedScript | undefined, keysAndArgs: ScriptArg[] | undefined): Promise<T> {
    return entry.command.promise.then(
      (reply) => {
        this.settled(entry);
        if (entry.calls === undefined) return parse(script === undefined ? reply : this.unwrapRefusal(reply, entry.what, entry.key));
        try {
          answerEach(entry.calls, this.unwrapRefusal(reply, entry.what, entry.key));
        } catch (error) {
          // The batch ran: none of its calls may be taken for one that never left.
          failEach(entry.calls, error, this.timeoutMs, (failure) => failure);
        }
        return parse(undefined);
      },
      (error: unknown) => {
        this.settled(entry);
        if (script !== undefined && keysAndArgs !== undefined && error instanceof Error && error.message.startsWith('NOSCRIPT')) {
          return this.answer(this.send('eval', scriptArgs(script.lua, script, keysAndArgs), entry.what, entry.key, entry.calls), parse, script, undefined);
        }
        if (entry.calls === undefined) throw toRLockError(error, entry.what, entry.key);
        failEach(entry.calls, error, this.timeoutMs, (failure) => (wasNotSent(error) ? notSent(failure) : failure));
        return parse(undefined);
      },
    );
  }

  /** Marks `entry` answered and forgets the answered calls at the head (replies come in order). */
  private settled(entry: Pending): void {
    entry.done = true;
    const { pending } = this;
    if (pending[this.head] !== entry) return;
    // Answered entries are dropped at once: a busy connection may go long without draining, and each holds its command.
    while (this.head < pending.length && (pending[this.head] as Pending).done) (pending as (Pending | undefined)[])[this.head++] = undefined;
    if (this.head === pending.length) {
      pending.length = 0;
      this.head = 0;
      if (this.queuedCalls === 0) this.calls?.leave();
    } else if (this.head > 1024) {
      pending.splice(0, this.head);
      this.head = 0;
    }
  }

  private send(name: string, args: (string | number)[], what: string, key: string, calls?: readonly QueuedCall[]): Pending {
    // A call that is not queued (a read, a renewal, a cancel) runs after every call queued before it.
    if (calls === undefined && this.queuedCalls > 0) this.sendBatches();
    const command = new Command(name, NO_ARGS as never[], UTF8_REPLIES);
    for (let index = 0; index < args.length; index++) {
      const arg = args[index];
      if (typeof arg !== 'string') args[index] = String(arg);
    }
    command.args = args;
    // A batch's deadline is its first call's, the soonest of its calls'.
    const deadline = calls === undefined ? monotonicNow() + this.timeoutMs : (calls[0] as QueuedCall).deadline;
    const entry: Pending = calls === undefined ? { command, deadline, what, key, done: false } : { command, calls, deadline, what, key, done: false };
    const down = this.down.cause;
    if (down) {
      command.reject(notSent(unavailableError(what, key, down)));
      return entry;
    }
    if (this.head === this.pending.length && this.queuedCalls === 0) this.calls?.enter();
    this.pending.push(entry);
    if (this.timer === undefined) this.armTimer(this.timeoutMs);
    // A connection with few calls unanswered writes at once: Redis works on this call while the client
    // prepares the next, instead of the two taking turns at each corked write.
    const through = this.batching && this.corked === undefined && this.pending.length - this.head <= WRITE_THROUGH;
    if (this.batching && !through) this.cork();
    this.redis.sendCommand(command);
    if (this.batching && ++this.batched >= this.batchLimit) this.flush();
    return entry;
  }

  private cork(): void {
    if (this.corked !== undefined) return;
    // Not connected: the offline queue keeps the order. On a Cluster each ready master is corked, one write per node.
    const streams = streamsOf(this.redis);
    if (streams.length === 0) return;
    for (const stream of streams) stream.cork();
    this.corked = streams;
    this.batched = 0;
    this.batchLimit = MAX_BATCH * streams.length;
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(this.onImmediate);
  }

  private readonly onImmediate = (): void => {
    this.flushScheduled = false;
    this.sendBatches();
    this.flush();
  };

  private flush(): void {
    const streams = this.corked;
    this.corked = undefined;
    this.batched = 0;
    if (streams) for (const stream of streams) stream.uncork();
  }

  private armTimer(delayMs: number): void {
    this.timer = setTimeout(this.onTimer, Math.max(1, Math.ceil(delayMs)));
    // A pending command keeps its connection busy; this timer alone must not keep a finished program alive.
    this.timer.unref();
  }

  // Deferred to the check phase: a reply already read in this turn's poll phase settles its call first,
  // so event-loop lag alone does not turn answered calls into timeouts.
  private readonly onTimer = (): void => {
    setImmediate(this.expire);
  };

  private readonly expire = (): void => {
    this.timer = undefined;
    const now = monotonicNow();
    for (let index = this.head; index < this.pending.length; index++) {
      const entry = this.pending[index] as Pending;
      if (entry.done) continue;
      if (entry.deadline > now) {
        this.armTimer(entry.deadline - now);
        return;
      }
      // Its rejection handler (above) marks it settled.
      entry.command.reject(new RedisUnavailableError(`Redis did not answer ${entry.what} on "${entry.key}" within ${this.timeoutMs} ms`));
    }
  };
}

/** A batch's answer: its reply was each call's already. */
const parseBatch = (): void => undefined;

/** EVALSHA's or EVAL's arguments: `first` (the sha or the source), the key count unless the script takes it first, then `keysAndArgs` as strings, in one new array. */
function scriptArgs(first: string, script: EmbeddedScript, keysAndArgs: readonly ScriptArg[]): string[] {
  const args = [first];
  if (script.numberOfKeys !== undefined) args.push(String(script.numberOfKeys));
  for (let index = 0; index < keysAndArgs.length; index++) {
    const arg = keysAndArgs[index] as ScriptArg;
    args.push(typeof arg === 'string' ? arg : String(arg));
  }
  return args;
}

/** Marks, on the error itself, the failure of a call that never reached ioredis. */
const NOT_SENT = Symbol('not sent');

/** True for the failure of a call that never reached ioredis (the connection was known down): it cannot run later. */
export function wasNotSent(error: unknown): boolean {
  return error instanceof Error && NOT_SENT in error;
}

/** `error`, marked as the failure of a call that never reached ioredis. */
function notSent<E extends Error>(error: E): E {
  if (!(NOT_SENT in error)) Object.defineProperty(error, NOT_SENT, { value: true });
  return error;
}
