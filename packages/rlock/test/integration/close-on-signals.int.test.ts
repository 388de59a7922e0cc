import { createClient, InvalidArgumentError, type RLockClient } from '@org/rlock';
import { RedisFleet, uniquePrefix } from '@org/rlock-testing';
import { Child, fixture } from './children.js';

/**
 * closeOnSignals(): SIGTERM to a process holding locks frees them at once (not
 * when their leases run out), within its bound, and the process still ends as
 * it would have without rlock.
 */
describe('closeOnSignals', () => {
  let fleet: RedisFleet;
  const children: Child[] = [];
  const clients: RLockClient[] = [];

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.kill('SIGKILL');
      await child.exited;
    }
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(() => fleet.stop());

  async function heldKeys(keyPrefix: string): Promise<number> {
    const redis = fleet.client(0);
    const [a, b, c, d] = await Promise.all([
      redis.exists(`${keyPrefix}:{a}`),
      redis.exists(`${keyPrefix}:{b}`),
      redis.exists(`${keyPrefix}:{c}`),
      redis.zcard(`${keyPrefix}:{d}:leases`),
    ]);
    return a + b + c + d;
  }

  function holder(env: Record<string, string>): Child {
    const child = new Child(fixture('holder-on-sigterm.mjs'), { REDIS_URL: fleet.url(0), ...env });
    children.push(child);
    return child;
  }

  it('releases every hold on SIGTERM, then ends the process by that signal', async () => {
    const keyPrefix = uniquePrefix();
    const child = holder({ PREFIX: keyPrefix, TIMEOUT_MS: '5000' });
    await child.line(/^held$/);
    expect(await heldKeys(keyPrefix)).toBe(4);
    const sentAt = performance.now();
    child.kill('SIGTERM');
    const exit = await child.exited;
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(performance.now() - sentAt).toBeLessThan(5_000);
    // Released by the process, not left to 60 s leases.
    expect(await heldKeys(keyPrefix)).toBe(0);
  });

  it("leaves the process's own SIGTERM handler in charge, releasing beside it", async () => {
    const keyPrefix = uniquePrefix();
    const child = holder({ PREFIX: keyPrefix, TIMEOUT_MS: '5000', OWN_HANDLER: '1' });
    await child.line(/^held$/);
    child.kill('SIGTERM');
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(child.lines).toContain('own handler');
    expect(await heldKeys(keyPrefix)).toBe(0);
  });

  it('ends the process within timeoutMs when Redis does not answer', async () => {
    const keyPrefix = uniquePrefix();
    const child = holder({ PREFIX: keyPrefix, TIMEOUT_MS: '1000' });
    await child.line(/^held$/);
    await fleet.pause(0);
    try {
      const sentAt = performance.now();
      child.kill('SIGTERM');
      expect(await child.exited).toEqual({ code: null, signal: 'SIGTERM' });
      // The 1 s bound, not close()'s own (two command timeouts of 5 s).
      expect(performance.now() - sentAt).toBeLessThan(4_000);
    } finally {
      await fleet.resume(0);
    }
  });

  it('returns a function that removes its listeners, and checks its options', async () => {
    const client = createClient({ redis: fleet.url(0), keyPrefix: uniquePrefix() });
    clients.push(client);
    const before = process.listenerCount('SIGTERM');
    const remove = client.closeOnSignals({ signals: ['SIGTERM', 'SIGUSR2'], timeoutMs: 1_000 });
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
    expect(process.listenerCount('SIGUSR2')).toBe(1);
    remove();
    remove();
    expect(process.listenerCount('SIGTERM')).toBe(before);
    expect(process.listenerCount('SIGUSR2')).toBe(0);
    expect(() => client.closeOnSignals({ signals: ['SIGKILL'] })).toThrow(InvalidArgumentError);
    expect(() => client.closeOnSignals({ signals: [] })).toThrow(InvalidArgumentError);
    expect(() => client.closeOnSignals({ timeoutMs: 0 })).toThrow(InvalidArgumentError);
    expect(() => client.closeOnSignals({ timout: 5 } as never)).toThrow(/unknown option "timout"/);
  });
});
