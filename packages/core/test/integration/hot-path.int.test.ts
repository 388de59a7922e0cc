import { RedisFleet } from '@org/rlock-testing';
import { fixture, runChild } from './child-processes.js';
import { uniquePrefix } from './support.js';

// The uncontended hot path's async layers, counted (promises made per call,
// in a process of its own): inside a task every promise also runs the async
// context's hook, so a layer more is client CPU per pair more.
describe('the uncontended hot path', () => {
  let fleet: RedisFleet;

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterAll(() => fleet.stop());

  it('makes at most 12.5 promises per lock() + unlock() pair and 11.5 per withLock (measured 12 and 11)', async () => {
    const out = await runChild(fixture('promises-per-pair.mjs'), { REDIS_URL: fleet.url(0), PREFIX: uniquePrefix() });
    const [, lockUnlock, withLock] = /lockUnlock ([\d.]+) withLock ([\d.]+)/.exec(out) ?? [];
    // Each pair sends two commands: a count of 0 would mean the hook saw nothing.
    expect(Number(lockUnlock)).toBeGreaterThanOrEqual(4);
    // Half a promise of room: a loaded machine now and then adds one inside ioredis.
    expect(Number(lockUnlock)).toBeLessThanOrEqual(12.5);
    expect(Number(withLock)).toBeLessThanOrEqual(11.5);
  });
});
