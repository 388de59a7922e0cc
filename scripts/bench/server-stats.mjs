// @ts-check
/**
 * Before/after snapshots of the server and this process, so a scenario can say
 * how many Redis commands one operation cost and who was busy (on a small
 * machine the client and redis-server share the cores).
 */
import { parseInfo } from './machine.mjs';

/**
 * @typedef {object} Snapshot
 * @property {number} at performance.now()
 * @property {NodeJS.CpuUsage} clientCpu
 * @property {number} serverCpuSec used_cpu_user + used_cpu_sys of redis-server
 * @property {number} commands total_commands_processed
 * @property {Record<string, number>} calls per command name (INFO commandstats), e.g. `evalsha`
 */

/**
 * @param {import('ioredis').Redis} redis
 * @returns {Promise<Snapshot>}
 */
export async function snapshot(redis) {
  const [cpu, stats, commandstats] = await Promise.all([redis.info('cpu'), redis.info('stats'), redis.info('commandstats')]);
  const c = parseInfo(cpu);
  /** @type {Record<string, number>} */
  const calls = {};
  for (const [field, value] of Object.entries(parseInfo(commandstats))) {
    const match = /calls=(\d+)/.exec(value);
    if (field.startsWith('cmdstat_') && match) calls[field.slice('cmdstat_'.length)] = Number(match[1]);
  }
  return {
    at: performance.now(),
    clientCpu: process.cpuUsage(),
    serverCpuSec: Number(c.used_cpu_user ?? 0) + Number(c.used_cpu_sys ?? 0),
    commands: Number(parseInfo(stats).total_commands_processed ?? 0),
    calls,
  };
}

/**
 * @typedef {object} Usage
 * @property {number} elapsedMs
 * @property {number} clientCpu share of one core used by this process (1 = one core busy)
 * @property {number} serverCpu share of one core used by redis-server
 * @property {number} commands commands the server processed (including the snapshots' own few)
 * @property {Record<string, number>} calls per command name
 */

/**
 * @param {Snapshot} before
 * @param {Snapshot} after
 * @returns {Usage}
 */
export function usageBetween(before, after) {
  const elapsedMs = after.at - before.at;
  const clientCpuMs = (after.clientCpu.user - before.clientCpu.user + after.clientCpu.system - before.clientCpu.system) / 1000;
  /** @type {Record<string, number>} */
  const calls = {};
  for (const [name, count] of Object.entries(after.calls)) {
    const delta = count - (before.calls[name] ?? 0);
    if (delta > 0) calls[name] = delta;
  }
  return {
    elapsedMs,
    clientCpu: clientCpuMs / elapsedMs,
    serverCpu: ((after.serverCpuSec - before.serverCpuSec) * 1000) / elapsedMs,
    commands: after.commands - before.commands,
    calls,
  };
}
