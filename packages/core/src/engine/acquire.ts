// The acquisition call, observed: its first try, the wait its object's strategy picks, and how the call ends.
import { ClientClosedError, LockAcquireTimeoutError, LockLostError, RedisUnavailableError, socketError } from '../errors.js';
import type { EngineContext } from './engine-context.js';
import { Hold } from './hold.js';
import { retryUntilAnswered, type TryOutcome } from './attempt.js';
import { WaitCall } from './wait-call.js';
import { waitOnChannel } from './wait-on-channel.js';
import type { WaitSpec } from './wait-spec.js';
import { WaitTries } from './wait-tries.js';
import { waitWithBackoff } from './wait-with-backoff.js';
import { acquireChannel, type LockChannelContext } from '../observability/channels.js';

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

/** How an observed acquisition is labelled: its object kind, and what "no grant by waitMs" means for the call. */
export interface AcquireLabel {
  /** `rlock.object`: `lock`, `fair_lock`, `read_lock`, `semaphore`… */
  readonly object: string;
  /** A call that answers false (tryLock, tryAcquire, a latch's await): `not_acquired`; one that throws LockAcquireTimeoutError: `timeout`. */
  readonly refusal: 'not_acquired' | 'timeout';
}

/**
 * {@link acquireOrWait}, observed: `rlock.acquire.duration`, `rlock.waiters.active`, the `rlock.acquire` span and channel, and
 * the hold's tracking. Every object kind acquires through here, so each is instrumented once.
 */
export function acquireObserved<G>(ctx: EngineContext, spec: WaitSpec<G>, label: AcquireLabel): Promise<G | undefined> {
  const probe = ctx.telemetry.startAcquire(label.object, spec.name, label.refusal);
  // The spec is the caller's own literal, made for this call: setting the watch on it spares copying a dozen fields.
  if (probe !== undefined) spec.watch = probe;
  if (!acquireChannel.hasSubscribers) return acquireOrWait(ctx, spec);
  return acquireChannel.tracePromise(() => acquireOrWait(ctx, spec), { object: label.object, name: spec.name, owner: spec.id } satisfies LockChannelContext);
}

/**
 * Tries, then waits as the object's strategy says (WaitSpec.strategy) and tries again, until acquired, `waitMs` runs out
 * (undefined) or the signal aborts. With `waitMs` it settles by then whatever Redis does: a failure or no answer is the cause
 * of a LockAcquireTimeoutError.
 */
export function acquireOrWait<G>(ctx: EngineContext, spec: WaitSpec<G>): Promise<G | undefined> {
  // Work in progress from the call on, not only while a command is out: a Redlock round may wait on its masters' connects.
  ctx.reports.callStarted?.();
  // Made now: waitMs runs from the call, however long it is deferred.
  const call = new WaitCall(spec);
  // The local queue is the channel's: a waiter by back-off is in none, and tries at once.
  const queues = spec.waitMs !== 0 && spec.strategy?.by !== 'backoff';
  // Tasks of this process queue behind the ones already waiting (no barging): a releasing task that locks again at once
  // must not starve them. Such a call sends nothing until woken: past a few hundred in one turn, it sets out in a later one.
  if (spec.arrival === 'queue' && queues && ctx.queues.hasWaiters(spec.channel) && !ctx.queues.setsOutNow(spec.channel))
    return ctx.queues.later(spec.channel, call).then(() => setOut(ctx, spec, call, queues));
  return setOut(ctx, spec, call, queues);
}

/** {@link acquireOrWait} from its arrival on: what it finds ahead of it decides whether it tries first or queues behind. */
function setOut<G>(ctx: EngineContext, spec: WaitSpec<G>, call: WaitCall<G>, queues: boolean): Promise<G | undefined> {
  const queueBehind = spec.arrival === 'queue' && queues && ctx.queues.hasJoined(spec.channel);
  // Where Redis keeps the order and the channel is subscribed, join before the first try: an announcement made
  // while it is out becomes a pending wake, so no second try after the acknowledgement is needed.
  const joinFirst = spec.arrival === 'join' && queues && ctx.queues.isSubscribed(spec.channel);
  if (queueBehind || joinFirst) return watched(spec, waitFor(ctx, spec, call, { queueBehind, arriving: false, first: undefined }));
  // Arrived to an empty local queue: whoever joins it meanwhile arrived later.
  const arriving = spec.queuesOthers === true && spec.arrival === 'queue' && queues && !spec.headOnly;
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
      if (!('grant' in outcome) || spec.signal?.aborted) return watched(spec, waitFor(ctx, spec, call, { queueBehind, arriving, first: { outcome } }));
      if (arriving) ctx.queues.arrived(spec.channel, false);
      call.dispose();
      spec.ended?.();
      ctx.reports.callEnded?.();
      const grant = outcome.grant;
      // Told here, in the reaction that settles the call, rather than in one more of its own.
      spec.watch?.settled(grant, liveHold(grant));
      return grant;
    },
    (error: unknown) => watched(spec, waitFor(ctx, spec, call, { queueBehind, arriving, first: { error } })),
  );
}

/** `grant` when it is a hold still held (one lost before its call settled has ended already, and is not tracked). */
function liveHold(grant: unknown): Hold | undefined {
  return grant instanceof Hold && grant.active ? grant : undefined;
}

/** A waiting call's outcome, told to its watch (when observed) before the caller sees it. */
function watched<G>(spec: WaitSpec<G>, waiting: Promise<G | undefined>): Promise<G | undefined> {
  const watch = spec.watch;
  if (watch === undefined) return waiting;
  return waiting.then(
    (grant) => {
      watch.settled(grant, liveHold(grant));
      return grant;
    },
    (error: unknown) => {
      watch.failed(error, spec.signal?.aborted === true);
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
    // Out of a queue kept in Redis, waited for no later than waitMs (it goes on after, in the owner's turn). Unanswered, it is
    // sent again until Redis answers: a try of this call parked in the connection's offline queue runs once Redis is back and
    // queues the owner, whose place only a leave sent after it gives up (else it heads the queue for its waiter lease).
    if (grant === undefined && spec.leave) {
      const leave = spec.leave.bind(spec);
      const leaving = leave().catch((error: unknown) =>
        error instanceof RedisUnavailableError ? void retryUntilAnswered(ctx, leave) : ctx.backgroundError(error),
      );
      ctx.background.track(leaving);
      await call.until(leaving);
    }
    spec.ended?.();
    ctx.reports.callEnded?.();
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

/** The first try's outcome, as the wait reads it, then the wait the object's strategy picks. */
async function waitLoop<G>(ctx: EngineContext, spec: WaitSpec<G>, call: WaitCall<G>, arrival: Arrival<G>): Promise<G | undefined> {
  const tries = new WaitTries(ctx, call);
  const { queueBehind, arriving, first: tried } = arrival;
  let retryInMs = ctx.maxSleepMs;
  if (tried) {
    let first: TryOutcome<G>;
    try {
      first = 'outcome' in tried ? tries.answered(tried.outcome) : { retryInMs: tries.failed(tried.error) };
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
  const strategy = spec.strategy;
  if (strategy?.by === 'backoff') return waitWithBackoff(ctx, spec, call, tries, strategy, retryInMs);
  return waitOnChannel(ctx, spec, call, tries, queueBehind, arriving, retryInMs);
}
