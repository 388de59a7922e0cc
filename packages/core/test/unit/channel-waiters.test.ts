import { jest } from '@jest/globals';
import { ChannelWaiters, Waiter } from '../../src/release-subscriber.js';

describe('ChannelWaiters', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function sleeper(channel: ChannelWaiters, owner = 'o'): { waiter: Waiter; woke: () => string | undefined } {
    const waiter = new Waiter(channel, owner);
    channel.waiters.push(waiter);
    let reason: string | undefined;
    void waiter.sleep(60_000, undefined).then((r) => (reason = r));
    return { waiter, woke: () => reason };
  }

  describe('released', () => {
    it('wakes only the longest-waiting sleeper', async () => {
      const channel = new ChannelWaiters('c');
      const first = sleeper(channel);
      const second = sleeper(channel);
      channel.released();
      await Promise.resolve();
      expect(first.woke()).toBe('released');
      expect(second.woke()).toBeUndefined();
    });

    it('keeps a wake for a waiter that was busy trying, so its next sleep returns at once', async () => {
      const channel = new ChannelWaiters('c');
      const busy = new Waiter(channel, 'o');
      channel.waiters.push(busy);
      channel.released();
      await expect(busy.sleep(60_000, undefined)).resolves.toBe('released');
    });

    it('holds back the local wake while this client yields its turn after its own release', async () => {
      const channel = new ChannelWaiters('c');
      const local = sleeper(channel);
      channel.yieldFor(2);
      channel.released();
      await Promise.resolve();
      expect(local.woke()).toBeUndefined();
      await jest.advanceTimersByTimeAsync(3);
      expect(local.woke()).toBe('released');
    });
  });
});
