// @ts-check
/**
 * One worker process of the fault runner (forked by run.mjs). It runs one
 * rlock client and, on it, a loop per object kind: take, critical section,
 * give back. Every step goes to the coordinator over IPC at once, stamped
 * with real time (performance.timeOrigin + performance.now(): every process
 * runs on one machine, so stamps of different workers compare). A stamp is
 * taken after an acquire resolved and before a release is sent, so the
 * interval it reports lies inside the real hold: an overlap of two reported
 * intervals is an overlap of two holds.
 *
 * Fenced kinds write through a store on a Redis of their own (never faulted):
 * a read and a write per section, each refused when its token is smaller than
 * the largest the store has seen.
 */
import { Redis } from 'ioredis';
import { createClient, RedisUnavailableError, RLockError } from '@org/rlock';

/** @type {{ id: string, redis: unknown, resource: string, keyPrefix: string, permits: number, watchdogTimeoutMs: number }} */
const config = JSON.parse(process.env.FAULTS_WORKER ?? '{}');
const now = () => performance.timeOrigin + performance.now();
/** @param {Record<string, unknown>} event */
const send = (event) => process.send?.({ w: config.id, t: now(), ...event });
const sendFlushed = (/** @type {Record<string, unknown>} */ event) =>
  new Promise((resolve) => (process.send ? process.send({ w: config.id, t: now(), ...event }, undefined, {}, () => resolve(undefined)) : resolve(undefined)));
const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Kinds with a critical section; the latch is driven by the coordinator's rounds. */
const KINDS = ['lock', 'spin', 'fair', 'nonre', 'nonre-fair', 'rw', 'multi', 'leader', 'sem', 'psem'];
const FENCED = new Set(['lock', 'spin', 'fair', 'nonre', 'nonre-fair', 'rw', 'multi', 'leader']);
const WAIT_MS = 8_000;
/** A semaphore whose count was lost (a restart without persistence) is set again after this wait. */
const PERMIT_WAIT_MS = 2_000;

process.on('unhandledRejection', (reason) => send({ e: 'unhandled', message: String(reason) }));
process.on('uncaughtException', (error) => send({ e: 'unhandled', message: String(error?.stack ?? error) }));

const client = createClient({ redis: /** @type {never} */ (config.redis), keyPrefix: config.keyPrefix, watchdogTimeoutMs: config.watchdogTimeoutMs });
client.on('error', (error) => report('background', error));
/** The lock kinds taken through withLock, by the getter that makes each (the spin lock with its default back-off). */
const LOCKS = /** @type {Record<string, (name: string) => import('@org/rlock').RLock<string>>} */ ({
  lock: (name) => client.getLock(name),
  spin: (name) => client.getSpinLock(name),
  fair: (name) => client.getFairLock(name),
  nonre: (name) => client.getNonReentrantLock(name),
  'nonre-fair': (name) => client.getNonReentrantFairLock(name),
});
const store = new Redis(config.resource, { enableAutoPipelining: true });
store.on('error', () => undefined);
const FENCE = `
local max = tonumber(redis.call('HGET', KEYS[1], 'max') or '0')
local token = tonumber(ARGV[2])
if token < max then return {0, tostring(max)} end
if token > max then redis.call('HSET', KEYS[1], 'max', ARGV[2]) end
if ARGV[1] == 'w' then
  redis.call('HSET', KEYS[1], 'v', ARGV[3])
  redis.call('HINCRBY', KEYS[1], 'writes', 1)
  return {1, ARGV[3]}
end
return {1, redis.call('HGET', KEYS[1], 'v') or '0'}`;
store.defineCommand('fence', { numberOfKeys: 1, lua: FENCE });

/** Current object names, by kind; replaced by each phase. */
let names = /** @type {Record<string, string>} */ ({});
let phase = '';
/** The name each semaphore kind last set its permits on. */
const setUp = /** @type {Record<string, string>} */ ({});
let stopping = false;
/** Waiting to be SIGKILLed: starts nothing new whose report could be lost with it. */
let doomed = false;
/** The fault armed on this worker: freeze (SIGSTOP itself) or be killed, once its kinds are all inside a section. */
let armed = /** @type {{ mode: string, until: number, joined: Set<string>, release: () => void, done: Promise<void> } | undefined} */ (undefined);

/** Reports an error: its class when it is rlock's, else a foreign one (a failed verdict). */
function report(/** @type {string} */ where, /** @type {unknown} */ error) {
  const typed = error instanceof RLockError;
  send({ e: 'error', where, typed, code: typed ? error.code : undefined, message: typed ? undefined : String(/** @type {Error} */ (error)?.stack ?? error) });
}

/**
 * How a hold's holder learned that it lost the hold, if it did: its signal aborted (listened to from the section's
 * enter until the release settled, since a paused holder may resume, finish its section and only then be told), or its
 * release rejected with a typed error. Reported in one 'settled' event once the release settled.
 * @typedef {{ enter: number, aborted: number, reason?: string, listen: (signal: AbortSignal | undefined) => void, settle: (release: Promise<unknown>) => Promise<void> }} LossWatch
 */
function lossWatch(/** @type {string} */ kind, /** @type {string} */ p) {
  /** @type {AbortSignal | undefined} */
  let watched;
  const onAbort = () => {
    watch.aborted = now();
    const reason = /** @type {{ reason?: string, code?: string } | undefined} */ (watched?.reason);
    watch.reason = reason?.reason ?? reason?.code;
    send({ e: 'lost', k: kind, t: watch.aborted });
  };
  /** @type {LossWatch} */
  const watch = {
    enter: 0,
    aborted: 0,
    listen(signal) {
      watched = signal;
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    },
    async settle(release) {
      let code;
      try {
        await release;
      } catch (error) {
        code = error instanceof RLockError ? error.code : 'foreign';
        throw error;
      } finally {
        watched?.removeEventListener('abort', onAbort);
        // A section never entered (the acquire failed) has no hold to report on.
        if (watch.enter > 0) send({ e: 'settled', k: kind, p, enter: watch.enter, lostAt: watch.aborted, reason: watch.reason, releaseError: code });
      }
    },
  };
  return watch;
}

/** The section itself: enter, (barrier of an armed fault), fenced read and write, exit. */
async function section(
  /** @type {Iteration} */ it,
  /** @type {LossWatch} */ watch,
  /** @type {string | undefined} */ token,
  /** @type {AbortSignal | undefined} */ signal,
  mode = 'x',
) {
  const { kind, name, p, requested, first } = it;
  const enter = now();
  watch.enter = enter;
  send({ e: 'enter', k: kind, p, token, mode, t: enter, requested, first });
  watch.listen(signal);
  await barrier(kind);
  let fence = 'none';
  if (FENCED.has(kind) && token !== undefined && mode === 'x') {
    try {
      const key = `fence:${name}`;
      const read = /** @type {[number, string]} */ (await /** @type {any} */ (store).fence(key, 'r', token, ''));
      if (read[0] === 0) fence = 'refused';
      else {
        const wrote = /** @type {[number, string]} */ (await /** @type {any} */ (store).fence(key, 'w', token, String(Number(read[1]) + 1)));
        fence = wrote[0] === 0 ? 'refused' : 'accepted';
      }
    } catch {
      fence = 'error';
    }
  } else await sleep(1);
  // `lost`: the signal aborted within the section, which ends the section there.
  send({ e: 'exit', k: kind, p, t: now(), enter, lost: watch.aborted, token, fence, mode });
}

/** Holds the section of every armed kind until all are in (or the arm runs out), then freezes or waits to be killed. */
async function barrier(/** @type {string} */ kind) {
  const arm = armed;
  if (arm === undefined || arm.joined.has(kind)) return;
  arm.joined.add(kind);
  if (arm.joined.size === KINDS.length) arm.release();
  await Promise.race([arm.done, sleep(Math.max(0, arm.until - now()))]);
  if (armed !== arm) return;
  armed = undefined;
  if (arm.mode === 'freeze') {
    await sendFlushed({ e: 'frozen', kinds: [...arm.joined] });
    process.kill(process.pid, 'SIGSTOP');
  } else {
    doomed = true;
    await sendFlushed({ e: 'doomed', kinds: [...arm.joined] });
    await sleep(30_000);
  }
}

/** One loop per kind, as long as the worker runs. */
async function loop(/** @type {string} */ kind) {
  let i = 0;
  let lastPhase = '';
  while (!stopping) {
    i += 1;
    // The names and the phase of this iteration: a phase that starts meanwhile does not relabel it.
    const it = { kind, name: names[kind], p: phase, requested: now(), i, first: phase !== lastPhase };
    lastPhase = phase;
    try {
      await once(it);
    } catch (error) {
      report(kind, error);
      await sleep(50);
    }
  }
}

/** @typedef {{ kind: string, name: string, p: string, requested: number, i: number, first: boolean }} Iteration */

async function once(/** @type {Iteration} */ it) {
  const { kind, name, i } = it;
  const watch = lossWatch(kind, it.p);
  switch (kind) {
    case 'lock':
    case 'spin':
    case 'fair':
    case 'nonre':
    case 'nonre-fair': {
      const lock = LOCKS[kind](name);
      await watch.settle(lock.withLock(({ signal, token }) => section(it, watch, token, signal), { waitMs: WAIT_MS }));
      return;
    }
    case 'rw': {
      const rw = client.getReadWriteLock(name);
      const read = i % 4 === 0;
      const lock = read ? rw.readLock() : rw.writeLock();
      await watch.settle(lock.withLock(({ signal, token }) => section(it, watch, token, signal, read ? 'r' : 'x'), { waitMs: WAIT_MS }));
      return;
    }
    case 'multi': {
      const [a, b] = name.split(' ');
      // Half the workers list the members the other way round: the global order must still avoid a deadlock.
      const order = Number(config.id.replace(/\D/g, '')) % 2 === 0 ? [a, b] : [b, a];
      const multi = client.getMultiLock(order.map((member) => client.getLock(member)));
      await watch.settle(multi.withLock(({ signal, tokens }) => section({ ...it, name: a }, watch, tokens[order.indexOf(a)], signal), { waitMs: WAIT_MS }));
      return;
    }
    case 'leader': {
      const term = await client.getLeaderElection(name).elect({ waitMs: WAIT_MS });
      await watch.settle(
        (async () => {
          try {
            await section(it, watch, term.epoch, term.signal);
          } finally {
            await term.resign();
          }
        })(),
      );
      return;
    }
    case 'sem': {
      const semaphore = client.getSemaphore(name);
      if (setUp[kind] !== name) {
        await semaphore.trySetPermits(config.permits);
        setUp[kind] = name;
      }
      let acquired;
      try {
        acquired = await semaphore.tryAcquire(1, { waitMs: PERMIT_WAIT_MS });
      } catch (error) {
        // Documented: an acquire Redis ran as it died, back past the replay window, may keep its permits.
        if (error instanceof RedisUnavailableError) send({ e: 'acquireUnanswered', k: kind, p: it.p });
        throw error;
      }
      if (!acquired) {
        await semaphore.trySetPermits(config.permits);
        return;
      }
      await section(it, watch, undefined, undefined);
      try {
        await semaphore.release(1);
      } catch (error) {
        // Documented: a release that got no answer may or may not have happened and is not retried.
        send({ e: 'releaseFailed', k: kind, p: it.p });
        throw error;
      }
      return;
    }
    case 'psem': {
      const semaphore = client.getPermitExpirableSemaphore(name);
      if (setUp[kind] !== name) {
        await semaphore.trySetPermits(config.permits);
        setUp[kind] = name;
      }
      const permit = await semaphore.tryAcquire({ waitMs: PERMIT_WAIT_MS });
      if (permit === undefined) {
        await semaphore.trySetPermits(config.permits);
        return;
      }
      await watch.settle(
        (async () => {
          try {
            await section(it, watch, permit.token, permit.signal);
          } finally {
            if (!permit.signal.aborted) await permit.release();
          }
        })(),
      );
      return;
    }
    default:
      throw new Error(`unknown kind ${kind}`);
  }
}

/** A latch round: count down once, then wait for the latch to open. */
async function latchRound(/** @type {string} */ name, /** @type {number} */ round, /** @type {string} */ p) {
  if (doomed) return;
  const latch = client.getCountDownLatch(name);
  // A count-down Redis did not answer may or may not have counted: it is tried again (the checker counts every try).
  for (let tries = 0; tries < 40; tries += 1) {
    send({ e: 'countDown', k: 'latch', round, p });
    try {
      await latch.countDown();
      break;
    } catch (error) {
      report('latch', error);
      if (!(error instanceof RedisUnavailableError)) break;
      await sleep(250);
    }
  }
  try {
    const open = await latch.await({ waitMs: WAIT_MS });
    send({ e: open ? 'open' : 'notOpen', k: 'latch', round, p });
  } catch (error) {
    report('latch', error);
    send({ e: 'notOpen', k: 'latch', round, p });
  }
}

const loops = /** @type {Promise<void>[]} */ ([]);
process.on('message', (/** @type {any} */ message) => {
  switch (message.type) {
    case 'phase':
      names = message.names;
      phase = message.phase;
      if (loops.length === 0) for (const kind of KINDS) loops.push(loop(kind));
      send({ e: 'phase', p: phase });
      return;
    case 'latch':
      void latchRound(message.name, message.round, message.phase);
      return;
    case 'arm': {
      /** @type {() => void} */
      let release = () => undefined;
      const done = new Promise((resolve) => (release = () => resolve(undefined)));
      armed = { mode: message.mode, until: now() + message.ms, joined: new Set(), release, done: /** @type {Promise<void>} */ (done) };
      return;
    }
    case 'stop':
      void stop();
      return;
    default:
  }
});

async function stop() {
  stopping = true;
  await Promise.all(loops);
  try {
    await client.close();
  } catch (error) {
    report('close', error);
  }
  store.disconnect();
  await sendFlushed({ e: 'closed' });
  process.disconnect?.();
}

send({ e: 'ready' });
