import { RedisFleet, uniquePrefix } from '@org/rlock-testing';
import { Child, fixture } from './children.js';

/**
 * The metrics of a service set up as users write it, in a process of its own: ESM, the SDK's MeterProvider
 * registered before the client, the first acquisition at once (then a second) (while `@opentelemetry/api` may still be loading),
 * and the hold lost to a Redis restart. Read back through the SDK's in-memory exporter.
 */
describe('observability of a fresh process', () => {
  let fleet: RedisFleet;
  const children: Child[] = [];

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.kill('SIGKILL');
      await child.exited;
    }
  });
  afterAll(() => fleet.stop());

  it('records the first acquisition after createClient, and a hold lost to a restart as lease.lost and hold.duration{end=lost}', async () => {
    const child = new Child(fixture('first-metrics.mjs'), { REDIS_URL: fleet.url(0), PREFIX: uniquePrefix() }, [], 30_000);
    children.push(child);
    await child.line(/^held$/);
    // Without persistence the server comes back empty: the next renewal finds the key gone.
    await fleet.restart(0);
    const report = JSON.parse(await child.line((line) => line.startsWith('{'))) as { reasons: string[]; points: Record<string, number> };
    // Found gone after the restart (expired), or past its deadline while Redis was down (unreachable): a lease lost either way.
    expect(report.reasons).toHaveLength(2);
    const lost: Record<string, number> = {};
    for (const reason of report.reasons) {
      expect(['expired', 'unreachable']).toContain(reason);
      const series = `rlock.lease.lost{rlock.object=lock,rlock.reason=${reason}}`;
      lost[series] = (lost[series] ?? 0) + 1;
    }
    expect(report.points).toEqual(
      expect.objectContaining({
        'rlock.acquire.duration{rlock.object=lock,rlock.outcome=acquired}': 2,
        ...lost,
        'rlock.hold.duration{rlock.end=lost,rlock.object=lock}': 2,
        'rlock.holds.active{rlock.object=lock}': 0,
      }),
    );
    expect(await child.exited).toEqual({ code: 0, signal: null });
  });

  it('does not count a hold taken while the api was loading when no provider was registered by then, as any hold taken before a provider', async () => {
    const child = new Child(fixture('late-provider.mjs'), { REDIS_URL: fleet.url(0), PREFIX: uniquePrefix() }, [], 30_000);
    children.push(child);
    const report = JSON.parse(await child.line((line) => line.startsWith('{'))) as Record<'whileHeld' | 'points', Record<string, number>>;
    expect(report.whileHeld['rlock.holds.active{rlock.object=lock}']).toBe(0);
    expect(report.points).toEqual(
      expect.objectContaining({
        'rlock.acquire.duration{rlock.object=lock,rlock.outcome=acquired}': 1,
        'rlock.hold.duration{rlock.end=released,rlock.object=lock}': 1,
        'rlock.holds.active{rlock.object=lock}': 0,
      }),
    );
    expect(await child.exited).toEqual({ code: 0, signal: null });
  });
});
