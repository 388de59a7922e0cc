// @ts-check
/**
 * Redis servers for the bench, and where they run. The bench starts its own
 * servers through RedisFleet (never the machine's 6379), without persistence,
 * and on a machine with two or more cores and `taskset` it pins every
 * redis-server to CPU 0 and the bench's own processes (this one and every
 * worker it forks afterwards, which inherit the mask) to the other cores, so
 * client and server do not fight over one core while the other idles.
 *
 * Set BENCH_PIN=0 to leave scheduling to the kernel.
 */
import { spawnSync } from 'node:child_process';
import { cpus, platform } from 'node:os';
import { Redis } from 'ioredis';
import { RedisFleet } from '@org/rlock-testing';
import { parseInfo } from './machine.mjs';

const SERVER_CPU = '0';

/** @type {{ ok: boolean, why: string } | undefined} */
let pinning;

/** Whether this run pins processes, and if not, why not. */
export function pinningState() {
  if (pinning) return pinning;
  const cores = cpus().length;
  if (process.env.BENCH_PIN === '0') pinning = { ok: false, why: 'BENCH_PIN=0' };
  else if (platform() !== 'linux') pinning = { ok: false, why: `not on Linux (${platform()})` };
  else if (cores < 2) pinning = { ok: false, why: `${cores} core` };
  else if (spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status !== 0) pinning = { ok: false, why: 'no taskset on PATH' };
  else pinning = { ok: true, why: '' };
  return pinning;
}

/** Turns pinning off for this run. @param {string} why */
export function noPinning(why) {
  pinning = { ok: false, why };
}

/** The CPUs the bench's own processes run on when pinned: every core but the server's. */
export function clientCpus() {
  const cores = cpus().length;
  return cores > 2 ? `1-${cores - 1}` : '1';
}

/**
 * `taskset -a -p -c <cpus> <pid>` (every thread of the process). Returns an
 * error text, or undefined when it worked.
 * @param {number} pid @param {string} cpuList
 */
function pin(pid, cpuList) {
  const result = spawnSync('taskset', ['-a', '-p', '-c', cpuList, String(pid)], { encoding: 'utf8' });
  return result.status === 0 ? undefined : (result.stderr || result.stdout || `exit ${result.status}`).trim();
}

/** Pins this process (and so the workers it forks later) to the client cores. */
export function pinSelf() {
  if (!pinningState().ok) return;
  const error = pin(process.pid, clientCpus());
  if (error) pinning = { ok: false, why: `taskset on the bench process failed: ${error}` };
}

/**
 * Pins every server of `fleet` to the server core (the servers were spawned
 * by this process and inherited its mask, so they must be moved explicitly).
 * @param {RedisFleet} fleet
 */
export async function pinFleet(fleet) {
  if (!pinningState().ok) return;
  if (fleet.backend !== 'process') {
    pinning = { ok: false, why: `servers run in containers (${fleet.backend} backend): not pinned` };
    return;
  }
  await pinUrls(fleet.urls());
}

/**
 * Pins the redis-servers at `urls` (local ones this process started) to the
 * server core, by the process id each reports in INFO server.
 * @param {readonly string[]} urls
 */
export async function pinUrls(urls) {
  if (!pinningState().ok) return;
  for (const url of urls) {
    const redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1 });
    try {
      const pid = Number(parseInfo(await redis.info('server')).process_id);
      const error = Number.isInteger(pid) && pid > 0 ? pin(pid, SERVER_CPU) : 'no process_id in INFO server';
      if (error) {
        pinning = { ok: false, why: `taskset on redis-server failed: ${error}` };
        return;
      }
    } finally {
      redis.disconnect();
    }
  }
}

/**
 * A RedisFleet of `size` independent masters for the bench, on the local
 * `redis-server` when it is on PATH (so it can be pinned) unless
 * RLOCK_FLEET_BACKEND says otherwise, pinned to the server core.
 * @param {number} size
 */
export async function startFleet(size) {
  const local = !process.env.RLOCK_FLEET_BACKEND && spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
  const fleet = await RedisFleet.start({ size, ...(local ? { backend: 'process' } : {}) });
  await pinFleet(fleet);
  return fleet;
}

/** One line for the report: where the processes ran. */
export function describePinning() {
  const state = pinningState();
  return state.ok ? `redis-server pinned to CPU ${SERVER_CPU}, the bench and its workers to CPU ${clientCpus()} (taskset)` : `not pinned (${state.why})`;
}
