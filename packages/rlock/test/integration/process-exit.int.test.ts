import { FaultProxy, RedisFleet, eventually, uniquePrefix } from '@org/rlock-testing';
import { Child, fixture } from './children.js';

/** Killed after this long: a process kept alive by a client it forgot would sit there (it should end within a few seconds). */
const LIMIT_MS = 15_000;

describe('a program that forgets its client', () => {
  let fleet: RedisFleet;
  const children: Child[] = [];

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 3 });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.kill('SIGKILL');
      await child.exited;
    }
  });
  afterAll(() => fleet.stop());

  const run = (mode: string, target: { REDIS_URL: string } | { MASTERS: string }): Child & { prefix: string } => {
    const prefix = uniquePrefix();
    const child = Object.assign(new Child(fixture('forgotten-hold.mjs'), { ...target, PREFIX: prefix, MODE: mode }, [], LIMIT_MS), { prefix });
    children.push(child);
    return child;
  };
  const single = (): { REDIS_URL: string } => ({ REDIS_URL: fleet.url(0) });
  const masters = (): { MASTERS: string } => ({ MASTERS: [0, 1, 2].map((i) => fleet.url(i)).join(',') });

  describe('a fixed-lease handle never released', () => {
    it('ends by itself once the lease lapsed, with no lockLost listener', async () => {
      const child = run('fixed', single());
      expect(await child.exited).toEqual({ code: 0, signal: null });
      expect(child.lines).toEqual(['held']);
    });

    it('ends by itself once the lease lapsed, with a lockLost listener (told of the loss first)', async () => {
      const child = run('listened', single());
      expect(await child.exited).toEqual({ code: 0, signal: null });
      expect(child.lines).toEqual(['held', 'lost expired']);
    });

    it('ends by itself on a Redlock client too', async () => {
      const child = run('fixed', masters());
      expect(await child.exited).toEqual({ code: 0, signal: null });
      expect(child.lines).toEqual(['held']);
    });

    it('stays alive for a Redlock acquisition whose first round waits for a slow master to connect', async () => {
      // The other masters connect and go idle first: the waiting call must keep the process (and the slow socket) alive.
      const slow = await FaultProxy.start({ port: fleet.port(2) });
      try {
        slow.delay(300);
        const child = run('fixed', { MASTERS: [fleet.url(0), fleet.url(1), slow.url].join(',') });
        expect({ exit: await child.exited, stderr: child.stderr }).toEqual({ exit: { code: 0, signal: null }, stderr: '' });
        expect(child.lines).toEqual(['held']);
      } finally {
        await slow.stop();
      }
    });
  });

  describe('a Redlock client never closed', () => {
    it('lets the process end by itself, whether it only made the client or also took and released a lock', async () => {
      const [idle, released] = [run('idle', masters()), run('released', masters())];
      expect(await idle.exited).toEqual({ code: 0, signal: null });
      expect(await released.exited).toEqual({ code: 0, signal: null });
      expect(released.lines).toEqual(['done']);
    });

    it('keeps the process alive while it holds a lock, renewing it on the masters, and lets it end once released', async () => {
      const child = run('hold', masters());
      await child.line(/^held$/);
      // Renewed (so the process runs) well past three 600 ms leases.
      const heldSince = performance.now();
      expect(await eventually(async () => performance.now() - heldSince > 2_000 && (await fleet.client(0).exists(`${child.prefix}:{job}`)) === 1, 5_000)).toBe(
        true,
      );
      expect(child.process.exitCode).toBeNull();
      child.kill('SIGUSR2');
      expect(await child.exited).toEqual({ code: 0, signal: null });
      expect(child.lines).toEqual(['held', 'released']);
    });
  });
});
