import { ClientClosedError, LockAcquireTimeoutError, LockLostError, RedisUnavailableError, socketError } from '../errors.js';
import type { EngineContext } from './engine-context.js';
import { Hold, type HoldTarget } from './hold.js';
import { leaseDeadline, monotonicNow, sleepFor } from '../connection/time.js';
import { wasNotSent } from '../connection/transport.js';
import { withinMs } from '../connection/bounded-call.js';
import { backoffDelayMs } from './backoff.js';
import type { WaitQueue, Waiter } from './wait-queue.js';
import type { AcquireWatch } from '../observability/telemetry.js';

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
  let failure: unknown;
  const once = (): Promise<boolean> =>
    spec.undo(op).then(
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

/** A try for a leased hold (a lock's, an expirable permit's), too late past lease − drift from its send. Made once per acquisition call. */
export class HoldAttempt<X = unknown> implements AttemptSpec<AcquireReply<X>, Hold> {
  readonly key: string;
  readonly owner: string;
  private readonly leaseMs: number;

  constructor(
    private readonly ctx: EngineContext,
    private readonly target: HoldTarget,
    /** Fixed lease in ms; undefined: a watchdog lease. */
    private readonly fixedLeaseMs: number | undefined,
    /** Cap on renewal in ms from the send (`maxLeaseMs`); undefined: none. */
    private readonly maxLeaseMs: number | undefined,
    private readonly acquire: (op: string, leaseMs: number) => Promise<AcquireReply<X>>,
    readonly undo: (op: string) => Promise<unknown>,
  ) {
    this.key = target.key;
    this.owner = target.owner;
    this.leaseMs = fixedLeaseMs ?? ctx.watchdogTimeoutMs;
  }

  send(op: string): Promise<AcquireReply<X>> {
    // The client's first holds: sent once its notice channel is subscribed, so a force-unlock of any grant is heard.
    const notices = this.ctx.noticesReady?.();
    return notices === undefined ? this.acquire(op, this.leaseMs) : notices.then(() => this.acquire(op, this.leaseMs));
  }

  refusal(reply: AcquireReply<X>): number | undefined {
    return reply.granted ? undefined : reply.retryInMs;
  }

  failure(reply: AcquireReply<X>): Error | undefined {
    return reply.granted ? undefined : reply.failure;
  }

  late(sentAt: number): boolean {
    return monotonicNow() >= leaseDeadline(sentAt, this.leaseMs, this.target.driftFactor);
  }

  keep(reply: AcquireReply<X>, sentAt: number): Hold {
    return recordGrant(this.ctx, this.target, reply as AcquireReply<X> & { granted: true }, sentAt, this.fixedLeaseMs, this.maxLeaseMs);
  }
}

/**
 * Records a grant on the owner's hold, or a new one. A hold believed active that the grant shows gone (another token; in an
 * exclusive mode, another owner of this client granted) is lost first: one process never believes in two holders.
 */
export function recordGrant<G>(
  ctx: EngineContext,
  target: HoldTarget,
  reply: AcquireReply<G> & { granted: true },
  sentAt: number | undefined,
  fixedLeaseMs: number | undefined,
  /** The acquisition's cap on renewal (`maxLeaseMs`), counted from `sentAt`; undefined: none. */
  maxLeaseMs?: number,
): Hold {
  let hold = ctx.holds.current(target.key, target.mode, target.owner);
  if (hold?.active && reply.count !== undefined && hold.token !== reply.token) hold.lose('expired');
  if (target.exclusive) ctx.holds.loseOthers(target.key, target.mode, target.owner);
  if (!hold?.active) {
    const fresh = new Hold<G>(target, reply.token, ctx.holdSites, reply.grant);
    if (hold && hold.count > 0) fresh.previous = hold as Hold<G>;
    ctx.holds.set(fresh);
    hold = fresh;
  }
  hold.acquired(reply.count ?? hold.count + 1, sentAt, fixedLeaseMs);
  if (maxLeaseMs !== undefined) hold.capLease((sentAt ?? monotonicNow()) + maxLeaseMs);
  ctx.acquired(hold);
  return hold;
}

/** How an acquisition waits for a grant of type `G`: on which channel, as whom, and what a try is. */
export interface WaitSpec<G> {
  /** The object's name, for a LockAcquireTimeoutError. */
  readonly name: string;
  readonly channel: string;
  /** Who waits: the owner, or an id the object's messages name. */
  readonly id: string;
  /** Only the head of the local queue tries (Redlock); the others wait their turn. */
  readonly headOnly: boolean;
  /** Its tries keep a place in Redis (a fair lock's queue, a writer's waiter lease): it keeps a timed try of its own. */
  readonly keepsPlace?: boolean;
  /** A grant excludes the other waiters here (an exclusive lock): the shared timed try is next due when the grant's lease could end. */
  readonly exclusive?: boolean;
  /** The object's wake policy: what a message on the channel wakes; false when it is none of the object's (dropped, counted). */
  readonly onMessage: (payload: string, queue: WaitQueue) => boolean;
  /**
   * 'queue': behind this process's waiters (no barging); 'join': into the local queue before the first try, where Redis keeps
   * the order; 'try': at once (a reentry would wait for itself; a latch's readers do not compete).
   */
  readonly arrival: 'queue' | 'join' | 'try';
  /** With 'queue': later arrivals in this process queue behind this call's first try (theirs could only win if it failed): a burst sends one try. */
  readonly queuesOthers?: boolean;
  /** Called when the call ends without a grant (timed out, aborted, failed): leave a queue kept in Redis. */
  leave?(): Promise<unknown>;
  /** undefined: without limit; 0: try once. */
  readonly waitMs: number | undefined;
  readonly signal: AbortSignal | undefined;
  /** One try (usually an {@link attempt}) under `signal`: the caller's, aborted also when `waitMs` runs out. */
  tryOnce(signal: AbortSignal | undefined): Promise<TryOutcome<G>>;
  /** A grant a script's reply handed the waiter (a fair lock's release to a head of its client), recorded; undefined: its next try claims it. */
  takeHandOff?(handOff: unknown): G | undefined;
  /** Gives back a grant its caller aborted before seeing; absent where a grant binds nobody (a latch's "open"). */
  giveBack?(grant: G): Promise<unknown>;
  /** Set by the observed engine on the caller's literal, which starts with it undefined so setting it keeps the object's shape. */
  watch: AcquireWatch | undefined;
  /** Called once as the call ends, granted or not, before its caller hears (in a reaction the call makes anyway). */
  readonly ended?: () => void;
}

/** Why a bounded call's signal aborted when `waitMs` ran out (never seen by callers). */
const WAIT_EXPIRED: unique symbol = Symbol('waitMs ran out');

/** A try or subscription out this long (ms) when `waitMs` runs out means Redis did not answer; shorter is a round trip in flight: tryLock gives false. */
const UNANSWERED_MS = 100;

/** One waiting call; its signal is the caller's, also aborted at `waitMs`, so it settles by then whatever Redis does. */
class WaitCall<G> {
  readonly signal: AbortSignal | undefined;
  /** Monotonic time at which `waitMs` runs out (infinite without one). */
  readonly deadline: number;
  /** The Redis failure of the latest try or subscription (or the one a refusal reported), until one succeeds: a timeout's cause. */
  failure: Error | undefined;
  /** Since when (monotonic ms) a try or subscription has been out; undefined while none is. */
  private outSince: number | undefined;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly forward: (() => void) | undefined;

  constructor(private readonly spec: WaitSpec<G>) {
    const { waitMs, signal } = spec;
    this.deadline = waitMs === undefined ? Number.POSITIVE_INFINITY : monotonicNow() + waitMs;
    if (waitMs === undefined || waitMs === 0) {
      // Unbounded, or one try: each call is bounded by commandTimeoutMs already.
      this.signal = signal;
      return;
    }
    const expiry = new AbortController();
    this.signal = expiry.signal;
    // Cuts off whatever is out at waitMs: a try, a subscription, a sleep. A
    // grant that still comes is undone by its attempt (the signal is aborted).
    this.timer = setTimeout(() => expiry.abort(WAIT_EXPIRED), waitMs);
    this.timer.unref();
    if (signal?.aborted) expiry.abort(signal.reason);
    else if (signal) {
      this.forward = () => expiry.abort(signal.reason);
      signal.addEventListener('abort', this.forward, { once: true });
    }
  }

  get expired(): boolean {
    return this.signal?.reason === WAIT_EXPIRED;
  }

  /** Why the call timed out, if Redis is why: a try or subscription out UNANSWERED_MS or more, else the latest failure. */
  timeoutCause(): Error | undefined {
    if (this.outSince !== undefined && monotonicNow() - this.outSince >= UNANSWERED_MS) {
      const outMs = Math.round(monotonicNow() - this.outSince);
      return new RedisUnavailableError(
        `Redis did not answer for "${this.spec.name}": a try or its SUBSCRIBE had been out ${outMs} ms when waitMs (${this.spec.waitMs} ms) ran out`,
        { cause: this.failure },
      );
    }
    return this.failure;
  }

  /** Settles like `work`, or rejects when the signal aborts (`work` goes on, and undoes a late grant); meanwhile the call waits on Redis. */
  race<T>(work: Promise<T>): Promise<T> {
    const signal = this.signal;
    if (!signal) return work;
    if (signal.aborted) {
      work.catch(() => undefined);
      return Promise.reject(signal.reason);
    }
    const since = monotonicNow();
    this.outSince = since;
    return new Promise<T>((resolve, reject) => {
      // Deferred a turn: a try that already answered settles the call first,
      // so its grant is given back by the caller rather than leaked.
      const onAbort = (): void => {
        setImmediate(() => reject(signal.reason));
      };
      const answered = (): void => {
        signal.removeEventListener('abort', onAbort);
        if (this.outSince === since) this.outSince = undefined;
      };
      signal.addEventListener('abort', onAbort, { once: true });
      work.then(
        (value) => {
          answered();
          resolve(value);
        },
        (error: unknown) => {
          answered();
          reject(error);
        },
      );
    });
  }

  tryOnce(ctx: EngineContext): Promise<TryOutcome<G>> {
    // Without a signal nothing can cut a try off: it is the call's own promise, with no layer around it.
    return this.signal ? this.tryRacing(ctx) : this.spec.tryOnce(undefined);
  }

  private async tryRacing(ctx: EngineContext): Promise<TryOutcome<G>> {
    const work = this.spec.tryOnce(this.signal);
    try {
      return await this.race(work);
    } catch (error) {
      // A grant this try still records belongs to nobody: give it back.
      work.then(
        (outcome) => {
          if ('grant' in outcome) void this.spec.giveBack?.(outcome.grant).catch((giveBackError: unknown) => ctx.backgroundError(giveBackError));
        },
        () => undefined,
      );
      throw error;
    }
  }

  /** Waits for `work` (leaving a queue kept in Redis) no later than the deadline; it goes on after. */
  async until(work: Promise<unknown>): Promise<void> {
    if (!Number.isFinite(this.deadline)) {
      await work;
      return;
    }
    await withinMs(work, Math.max(0, this.deadline - monotonicNow()), () => undefined).catch(() => undefined);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.forward) this.spec.signal?.removeEventListener('abort', this.forward);
  }
}

/**
 * A Redis failure that ended a call, said of the object the call was for rather than of a key or channel inside it (a
 * SUBSCRIBE on an internal channel); the socket's error stays the cause where there is one.
 */
function notAcquired(name: string, error: RedisUnavailableError): RedisUnavailableError {
  const socket = socketError(error.cause);
  const why = socket === undefined ? error.message : `Redis is unavailable (${socket.message})`;
  return new RedisUnavailableError(`lock "${name}" was not acquired: ${why}`, { cause: socket ?? error });
}

/** For tryLock and tryAcquire: a timeout caused by Redis not answering is that failure, not a refusal to report as false. */
export function unansweredFailure(error: unknown): unknown {
  return error instanceof LockAcquireTimeoutError && error.cause instanceof Error ? error.cause : error;
}

/**
 * Tries, then waits on the object's channel and tries again when woken or the holder's TTL runs out (capped at a third of the
 * watchdog lease: a TTL of −1 must not park a waiter forever), until acquired, `waitMs` runs out (undefined) or the signal aborts.
 * With `waitMs` it settles by then whatever Redis does: a failure or no answer is the cause of a LockAcquireTimeoutError.
 */
export function acquireOrWait<G>(ctx: EngineContext, spec: WaitSpec<G>): Promise<G | undefined> {
  // Work in progress from the call on, not only while a command is out: a Redlock round may wait on its masters' connects.
  ctx.callStarted();
  const call = new WaitCall(spec);
  // Tasks of this process queue behind the ones already waiting (no barging):
  // a releasing task that locks again at once must not starve them.
  const queueBehind = spec.arrival === 'queue' && spec.waitMs !== 0 && ctx.queues.hasWaiters(spec.channel);
  // Where Redis keeps the order and the channel is subscribed, join before the first try: an announcement made
  // while it is out becomes a pending wake, so no second try after the acknowledgement is needed.
  const joinFirst = spec.arrival === 'join' && spec.waitMs !== 0 && ctx.queues.isSubscribed(spec.channel);
  if (queueBehind || joinFirst) return watched(spec.watch, waitFor(ctx, spec, call, { queueBehind, arriving: false, first: undefined }));
  // Arrived to an empty local queue: whoever joins it meanwhile arrived later.
  const arriving = spec.queuesOthers === true && spec.arrival === 'queue' && spec.waitMs !== 0 && !spec.headOnly;
  if (arriving) ctx.queues.arrive(spec.channel);
  // The first try is the call's one layer: only a refusal or a failure enters the wait.
  let first: Promise<TryOutcome<G>>;
  try {
    first = call.tryOnce(ctx);
  } catch (error) {
    first = Promise.reject(error);
  }
  return first.then(
    (outcome) => {
      if (!('grant' in outcome) || spec.signal?.aborted) return watched(spec.watch, waitFor(ctx, spec, call, { queueBehind, arriving, first: { outcome } }));
      if (arriving) ctx.queues.arrived(spec.channel, false);
      call.dispose();
      spec.ended?.();
      ctx.callEnded();
      const grant = outcome.grant;
      // Told here, in the reaction that settles the call, rather than in one more of its own.
      spec.watch?.settled(grant, liveHold(grant));
      return grant;
    },
    (error: unknown) => watched(spec.watch, waitFor(ctx, spec, call, { queueBehind, arriving, first: { error } })),
  );
}

/** How long a grant excludes others at most, ms: a hold's time to its deadline; −1 (unknown) for other grants. */
function grantLeftMs(grant: unknown): number {
  return grant instanceof Hold ? Math.max(0, grant.deadline - monotonicNow()) : -1;
}

/** `grant` when it is a hold still held (one lost before its call settled has ended already, and is not tracked). */
function liveHold(grant: unknown): Hold | undefined {
  return grant instanceof Hold && grant.active ? grant : undefined;
}

/** A waiting call's outcome, told to `watch` (when observed) before the caller sees it. */
function watched<G>(watch: AcquireWatch | undefined, waiting: Promise<G | undefined>): Promise<G | undefined> {
  if (watch === undefined) return waiting;
  return waiting.then(
    (grant) => {
      watch.settled(grant, liveHold(grant));
      return grant;
    },
    (error: unknown) => {
      watch.failed(error);
      throw error;
    },
  );
}

/** How a call arrived, and how its first try went when it made one before waiting. */
interface Arrival<G> {
  /** Behind this process's waiters: its first try follows the subscription. */
  readonly queueBehind: boolean;
  /** Its first try kept the process's later arrivals queued behind it. */
  readonly arriving: boolean;
  readonly first: { readonly outcome: TryOutcome<G> } | { readonly error: unknown } | undefined;
}

/** The rest of an {@link acquireOrWait} past its first try: the wait, and how the call ends. */
async function waitFor<G>(ctx: EngineContext, spec: WaitSpec<G>, call: WaitCall<G>, arrival: Arrival<G>): Promise<G | undefined> {
  let grant: G | undefined;
  // Read when the loop ends: a try cut off at waitMs may answer while the queue is left.
  let cause: Error | undefined;
  try {
    grant = await waitLoop(ctx, spec, call, arrival);
    if (grant === undefined && spec.waitMs) cause = call.timeoutCause();
  } catch (error) {
    if (!call.expired) {
      // Whatever failed once close() began (a SUBSCRIBE or try cut off by the disconnect) is the close.
      if (ctx.closed && !(error instanceof ClientClosedError) && !spec.signal?.aborted) throw new ClientClosedError();
      throw error instanceof RedisUnavailableError ? notAcquired(spec.name, error) : error;
    }
    cause = call.timeoutCause();
  } finally {
    call.dispose();
    // Out of a queue kept in Redis, waited for no later than waitMs (it goes on after, in the owner's turn).
    if (grant === undefined && spec.leave) {
      const leaving = spec.leave().catch((error: unknown) => ctx.backgroundError(error));
      ctx.background.track(leaving);
      await call.until(leaving);
    }
    spec.ended?.();
    ctx.callEnded();
  }
  if (grant === undefined) {
    if (cause) throw new LockAcquireTimeoutError(spec.name, spec.waitMs ?? 0, { cause });
    return undefined;
  }
  if (spec.signal?.aborted) {
    // Aborted while the grant was recorded: the caller will never release what it does not know it has.
    await spec.giveBack?.(grant).catch((error: unknown) => {
      if (!(error instanceof LockLostError)) ctx.backgroundError(error);
    });
    throw spec.signal.reason;
  }
  return grant;
}

async function waitLoop<G>(ctx: EngineContext, spec: WaitSpec<G>, call: WaitCall<G>, arrival: Arrival<G>): Promise<G | undefined> {
  const waitUntil = call.deadline;
  let failingSince: number | undefined;
  let failures = 0;
  // A waiting call rides out a short outage (failover, restart) with jittered backoff for up to commandTimeoutMs
  // (no later than waitMs, when the last failure is the timeout's cause); waitMs 0 fails at once.
  const failed = (error: unknown): number => {
    if (!(error instanceof RedisUnavailableError) || spec.waitMs === 0) throw error;
    call.failure = error;
    failingSince ??= monotonicNow();
    if (monotonicNow() - failingSince >= ctx.commandTimeoutMs) throw error;
    return backoffDelayMs(++failures, Math.min(50, ctx.commandTimeoutMs), ctx.commandTimeoutMs, Math.random());
  };
  const answered = (outcome: TryOutcome<G>): TryOutcome<G> => {
    failingSince = undefined;
    failures = 0;
    call.failure = 'failure' in outcome ? outcome.failure : undefined;
    return outcome;
  };
  const tryOnce = async (): Promise<TryOutcome<G>> => {
    try {
      return answered(await call.tryOnce(ctx));
    } catch (error) {
      return { retryInMs: failed(error) };
    }
  };
  const { queueBehind, arriving, first: tried } = arrival;
  let retryInMs = ctx.maxSleepMs;
  if (tried) {
    let first: TryOutcome<G>;
    try {
      first = 'outcome' in tried ? answered(tried.outcome) : { retryInMs: failed(tried.error) };
    } catch (error) {
      // Those that queued behind this try wait for a wake: the next tries now.
      if (arriving) ctx.queues.arrived(spec.channel, true);
      throw error;
    }
    // Granted: its release wakes them; refused: its client waits, and it joins them.
    if (arriving) ctx.queues.arrived(spec.channel, false);
    if ('grant' in first) return first.grant;
    if (spec.waitMs === 0) return undefined;
    retryInMs = first.retryInMs;
  }

  let waiter: Waiter | undefined;
  let acquired = false;
  let entered: Waiter | undefined;
  let joining: Promise<Waiter> | undefined;
  try {
    for (;;) {
      joining = ctx.queues.join(spec, (joined) => (entered = joined), arriving);
      try {
        waiter = await call.race(joining);
        break;
      } catch (error) {
        // Without waitMs a failed SUBSCRIBE (a refused connection) fails the call; with it, it is ridden out like a try.
        if (spec.waitMs === undefined || call.signal?.aborted) throw error;
        entered = undefined;
        const delayMs = Math.min(failed(error), waitUntil - monotonicNow());
        if (delayMs <= 0) return undefined;
        await sleepFor(delayMs, call.signal);
      }
    }
    // Subscribed (acknowledged): no later release can be missed, so one more
    // try closes the gap since the first (or, having joined first, is the first).
    let tryNow = !queueBehind;
    const queue = waiter.queue;
    // Capped at a third of the watchdog lease: a TTL of −1 must not park a waiter forever.
    const retryDelay = (ms: number): number => Math.min(ms >= 0 ? Math.max(1, ms) : ctx.maxSleepMs, ctx.maxSleepMs);
    for (;;) {
      // No try starts once waitMs has run out: it could not answer in time.
      if (tryNow && (!spec.headOnly || waiter.isHead) && waitUntil - monotonicNow() > 0) {
        const result = await tryOnce();
        const timed = waiter.timed;
        waiter.timed = false;
        if ('grant' in result) {
          acquired = true;
          if (waiter.sharesRetry) {
            // Exclusive: the others' next timed try is due when this grant could lapse. Shared (readers, permits, an open
            // latch): a timed try that found room stood for all, so the next sharing waiter tries at once.
            if (spec.exclusive === true) queue.retryIn(retryDelay(grantLeftMs(result.grant)));
            else if (timed) queue.retryIn(0);
          }
          // Branches of one task share its ownership: those waiting beside this one can reenter now.
          ctx.queues.wakeSiblings(waiter);
          return result.grant;
        }
        retryInMs = result.retryInMs;
        if (waiter.sharesRetry) queue.retryIn(retryDelay(retryInMs));
      }
      const remaining = waitUntil - monotonicNow();
      if (remaining <= 0) return undefined;
      // A sharing waiter has no timer of its own (a bounded call's signal ends its sleep at waitMs); the queue's is armed.
      if (waiter.sharesRetry && !queue.retryArmed) queue.retryIn(retryDelay(retryInMs));
      const sleepMs = waiter.sharesRetry
        ? Number.POSITIVE_INFINITY
        : spec.headOnly && !waiter.isHead
          ? remaining // until its turn
          : Math.min(retryDelay(retryInMs), remaining);
      await waiter.sleep(sleepMs, call.signal);
      if (waiter.queue.closedError) throw waiter.queue.closedError;
      const handOff = waiter.handOff;
      if (handOff !== undefined) {
        waiter.handOff = undefined;
        const grant = spec.takeHandOff?.(handOff);
        if (grant !== undefined) {
          acquired = true;
          ctx.queues.wakeSiblings(waiter);
          return grant;
        }
      }
      tryNow = true;
    }
  } finally {
    if (waiter) ctx.queues.leave(waiter, acquired);
    else {
      // Cut off while joining: out of the queue at once, so no wake or hand-off goes to an ended call.
      joining?.catch(() => undefined);
      if (entered) ctx.queues.leave(entered, false);
    }
  }
}
