import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { ProcessRefs } from '../../src/connection/process-refs.js';

/** A connection as ProcessRefs sees it: events, a socket that counts ref()/unref() calls, a retry timer. */
class Connection extends EventEmitter {
  stream: { ref(): void; unref(): void; destroyed: boolean; refs: number; unrefs: number } | undefined;
  reconnectTimeout: NodeJS.Timeout | null = null;

  connectSocket(): void {
    const socket = {
      refs: 0,
      unrefs: 0,
      destroyed: false,
      ref: () => void socket.refs++,
      unref: () => void socket.unrefs++,
    };
    this.stream = socket;
    this.emit('connect');
  }
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('ProcessRefs', () => {
  it('unrefs a connection while idle and refs it while there is work, on transitions only', async () => {
    const refs = new ProcessRefs();
    const connection = new Connection();
    refs.track(connection as unknown as Redis);
    connection.connectSocket();
    const socket = connection.stream!;
    expect([socket.refs, socket.unrefs]).toEqual([0, 1]);

    refs.enter(); // a call goes out
    refs.enter(); // a hold begins
    refs.leave(); // the call is answered
    expect([socket.refs, socket.unrefs]).toEqual([1, 1]);
    await nextTurn();
    expect([socket.refs, socket.unrefs]).toEqual([1, 1]); // still holding

    refs.leave(); // the hold ends
    refs.enter(); // and the next call goes out in the same turn
    refs.leave();
    expect([socket.refs, socket.unrefs]).toEqual([1, 1]); // idle is checked a turn later
    await nextTurn();
    expect([socket.refs, socket.unrefs]).toEqual([1, 2]);
  });

  it('applies the current state to each new socket and to the timer of a reconnect', async () => {
    const refs = new ProcessRefs();
    const connection = new Connection();
    refs.track(connection as unknown as Redis);
    refs.enter();
    connection.connectSocket();
    expect(connection.stream).toMatchObject({ refs: 1, unrefs: 0 });

    const retry = setTimeout(() => undefined, 60_000);
    const nextRetry = setTimeout(() => undefined, 60_000);
    try {
      connection.reconnectTimeout = retry;
      connection.stream = undefined;
      refs.leave();
      await nextTurn();
      expect(retry.hasRef()).toBe(false);
      refs.enter();
      expect(retry.hasRef()).toBe(true);
      refs.leave();
      await nextTurn();
      // ioredis makes a new timer for each attempt, and says so.
      connection.reconnectTimeout = nextRetry;
      expect(nextRetry.hasRef()).toBe(true);
      connection.emit('reconnecting');
      expect(nextRetry.hasRef()).toBe(false);
    } finally {
      clearTimeout(retry);
      clearTimeout(nextRetry);
    }
  });
});
