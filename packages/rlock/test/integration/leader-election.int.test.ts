import { createClient, LockAcquireTimeoutError, LockLostError, type LeadershipEvent, type LeadershipLostEvent, type RLockClient } from '@org/rlock';
import { RedisFleet, eventually, uniquePrefix } from '@org/rlock-testing';
import { Child, fixture } from './children.js';

/**
 * Leader election on the lock and the watchdog: one leader at a time, an epoch
 * (the fencing token) that grows with every leader, a signal that aborts the
 * moment leadership is lost.
 */
describe('LeaderElection', () => {
  let fleet: RedisFleet;
  const clients: RLockClient[] = [];
  const children: Child[] = [];

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await child.exited;
    }
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(() => fleet.stop());

  function client(keyPrefix: string, watchdogTimeoutMs = 3_000): RLockClient {
    const made = createClient({ redis: fleet.url(0), keyPrefix, watchdogTimeoutMs });
    made.on('error', () => undefined);
    clients.push(made);
    return made;
  }

  describe('elect()', () => {
    it('elects one candidate at a time; the next has a larger epoch; events and currentLeader follow', async () => {
      const keyPrefix = uniquePrefix();
      const a = client(keyPrefix);
      const b = client(keyPrefix);
      const electionA = a.getLeaderElection('scheduler');
      const electionB = b.getLeaderElection('scheduler');
      const events: string[] = [];
      electionA.on('elected', (event: LeadershipEvent) => events.push(`elected ${event.epoch}`));
      electionA.on('resigned', (event: LeadershipEvent) => events.push(`resigned ${event.epoch}`));

      expect(await electionA.currentLeader()).toBeUndefined();
      const first = await electionA.elect();
      expect(first.isLeader).toBe(true);
      expect(first.owner).toMatch(new RegExp(`^${a.clientId}:`));
      expect(await electionB.currentLeader()).toMatchObject({ owner: first.owner, epoch: first.epoch });
      await expect(electionB.elect({ waitMs: 100 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);

      const waiting = electionB.elect();
      await first.resign();
      await first.resign(); // idempotent
      expect(first.isLeader).toBe(false);
      const second = await waiting;
      expect(BigInt(second.epoch)).toBeGreaterThan(BigInt(first.epoch));
      expect((await electionA.currentLeader())?.owner).toBe(second.owner);
      expect(events).toEqual([`elected ${first.epoch}`, `resigned ${first.epoch}`]);
      await second[Symbol.asyncDispose]();
      expect(await electionA.currentLeader()).toBeUndefined();
    });

    it("aborts the leader's signal and emits lost when leadership is taken from it", async () => {
      const keyPrefix = uniquePrefix();
      const a = client(keyPrefix, 300);
      const election = a.getLeaderElection('forced');
      const lost: LeadershipLostEvent[] = [];
      election.on('lost', (event) => lost.push(event));
      const term = await election.elect();
      expect(await client(keyPrefix).getLock('forced').forceUnlock()).toBe(true);
      // The force-unlock's notice tells the leader's client.
      expect(await eventually(() => term.signal.aborted, 3_000)).toBe(true);
      expect(term.signal.reason).toBeInstanceOf(LockLostError);
      expect(term.isLeader).toBe(false);
      expect(lost.map((event) => [event.epoch, event.reason])).toEqual([[term.epoch, 'forced']]);
      await term.resign(); // lost already: nothing to give up
    });
  });

  describe('lead()', () => {
    it('runs fn while leading, re-enters the election after a term, and stops on its signal', async () => {
      const keyPrefix = uniquePrefix();
      const a = client(keyPrefix);
      const election = a.getLeaderElection('loop');
      const epochs: string[] = [];
      const stop = new AbortController();
      const leading = election.lead(
        async ({ epoch, signal }) => {
          epochs.push(epoch);
          // The first term ends by itself; the second runs until the caller stops.
          if (epochs.length === 1) return;
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        },
        { signal: stop.signal },
      );
      expect(await eventually(() => epochs.length === 2, 5_000)).toBe(true);
      expect(BigInt(epochs[1] as string)).toBeGreaterThan(BigInt(epochs[0] as string));
      stop.abort(new Error('shutting down'));
      await expect(leading).rejects.toThrow('shutting down');
      expect(await election.currentLeader()).toBeUndefined();
    });

    it("gives leadership up and rejects with fn's own error", async () => {
      const a = client(uniquePrefix());
      const election = a.getLeaderElection('failing');
      await expect(
        election.lead(() => {
          throw new Error('job failed');
        }),
      ).rejects.toThrow('job failed');
      expect(await election.currentLeader()).toBeUndefined();
    });
  });

  describe('across processes', () => {
    it('a leader stopped past its lease is replaced by one with a larger epoch, and its signal aborts when it runs again', async () => {
      const keyPrefix = uniquePrefix();
      const env = { REDIS_URL: fleet.url(0), PREFIX: keyPrefix, NAME: 'cron', WATCHDOG_MS: '1000' };
      const first = new Child(fixture('leader.mjs'), env);
      children.push(first);
      const firstTerm = await first.event({ event: 'elected' });
      const second = new Child(fixture('leader.mjs'), env);
      children.push(second);
      await second.event({ event: 'ready' });
      const observer = client(keyPrefix).getLeaderElection('cron');
      expect((await observer.currentLeader())?.epoch).toBe(firstTerm.epoch);

      // Frozen: no renewal, no timer, no reply. Its 1 s lease lapses on the server.
      first.kill('SIGSTOP');
      const secondTerm = await second.event({ event: 'elected' });
      expect(BigInt(secondTerm.epoch as string)).toBeGreaterThan(BigInt(firstTerm.epoch as string));
      expect(await observer.currentLeader()).toMatchObject({ owner: secondTerm.owner, epoch: secondTerm.epoch });
      expect(first.events.filter((event) => event.event === 'signal')).toEqual([]);

      // Running again, the old leader learns at once that it lost (its deadline passed unrenewed).
      first.kill('SIGCONT');
      expect(await first.event({ event: 'signal' })).toMatchObject({ epoch: firstTerm.epoch, reason: 'unreachable' });
      expect(await first.event({ event: 'lost' })).toMatchObject({ epoch: firstTerm.epoch, reason: 'unreachable' });
      // The new leader keeps leading: the old one's cleanup is checked by owner and token.
      expect(await observer.currentLeader()).toMatchObject({ epoch: secondTerm.epoch });
      expect(second.events.filter((event) => event.event === 'signal')).toEqual([]);
    });
  });
});
