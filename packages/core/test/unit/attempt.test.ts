import { describe, expect, it } from '@jest/globals';
import { attempt, type AttemptSpec } from '../../src/engine/attempt.js';
import { EngineContext } from '../../src/engine/engine-context.js';
import { WaitQueues } from '../../src/engine/wait-queue.js';
import { RedisUnavailableError } from '../../src/errors.js';

function context(commandTimeoutMs = 1_000): EngineContext {
  const queues = new WaitQueues(() => ({ ready: Promise.resolve(), close: () => undefined }));
  const reports = { watchesLosses: () => false, acquired: () => undefined, released: () => undefined, lost: () => undefined, backgroundError: () => undefined };
  return new EngineContext({ clientId: 'c', keyPrefix: 'p', watchdogTimeoutMs: 30_000, commandTimeoutMs }, queues, reports);
}

/** An undo that Redis does not answer (connection down) for its first `failures` sends, then does. */
function undoUnansweredFor(target: { undone: string[] }, failures: number): { sends: number; undo: (op: string) => Promise<void> } {
  const state = {
    sends: 0,
    undo: async (op: string): Promise<void> => {
      if (++state.sends <= failures) throw new RedisUnavailableError('connection down');
      target.undone.push(op);
    },
  };
  return state;
}

/** A try whose reply is `granted` (or `fails`), that records its sends and undos. */
function spec(reply: { granted: boolean; fails?: Error; late?: boolean }): AttemptSpec<boolean, number> & { sent: string[]; undone: string[] } {
  const sent: string[] = [];
  const undone: string[] = [];
  return {
    key: 'k',
    owner: 'o',
    sent,
    undone,
    send: async (op) => {
      sent.push(op);
      if (reply.fails) throw reply.fails;
      return reply.granted;
    },
    undo: async (op) => void undone.push(op),
    refusal: (granted) => (granted ? undefined : 7),
    ...(reply.late === undefined ? {} : { late: () => reply.late as boolean }),
    keep: () => 3,
  };
}

describe('attempt', () => {
  it('gives the grant the spec keeps, or the refusal, and undoes nothing', async () => {
    const granted = spec({ granted: true });
    await expect(attempt(context(), granted, undefined)).resolves.toEqual({ grant: 3 });
    await expect(attempt(context(), spec({ granted: false }), undefined)).resolves.toEqual({ retryInMs: 7 });
    expect(granted.undone).toEqual([]);
  });

  it('undoes a late grant and tries again; a grant that cannot be late (no `late`) is kept', async () => {
    const late = spec({ granted: true, late: true });
    await expect(attempt(context(), late, undefined)).resolves.toEqual({ retryInMs: 1 });
    expect(late.undone).toEqual(late.sent);
    await expect(attempt(context(), spec({ granted: true }), undefined)).resolves.toEqual({ grant: 3 });
  });

  it('undoes a grant whose caller aborted meanwhile, and rejects with the reason', async () => {
    const controller = new AbortController();
    const granted = spec({ granted: true });
    const send = granted.send.bind(granted);
    granted.send = (op) => send(op).finally(() => controller.abort(new Error('gave up')));
    await expect(attempt(context(), granted, controller.signal)).rejects.toThrow('gave up');
    expect(granted.undone).toEqual(granted.sent);
  });

  it('undoes an acquire that got no answer (it may still run), and rejects with the failure', async () => {
    const unanswered = spec({ granted: true, fails: new RedisUnavailableError('no answer') });
    await expect(attempt(context(), unanswered, undefined)).rejects.toThrow('no answer');
    expect(unanswered.undone).toEqual(unanswered.sent);
  });

  it('sends the undo of an unanswered acquire again until Redis answers it, however long past commandTimeoutMs', async () => {
    const ctx = context(20);
    const unanswered = spec({ granted: true, fails: new RedisUnavailableError('no answer') });
    // Down for 15 tries, one every 10-20 ms: well past the 20 ms commandTimeoutMs.
    const undo = undoUnansweredFor(unanswered, 15);
    unanswered.undo = undo.undo;
    await expect(attempt(ctx, unanswered, undefined)).rejects.toThrow('no answer');
    await ctx.background.settled();
    expect(undo.sends).toBe(16);
    expect(unanswered.undone).toEqual(unanswered.sent);
  });

  it("leaves the owner's turn within commandTimeoutMs while the undo of a late grant goes on in the background", async () => {
    const ctx = context(20);
    const late = spec({ granted: true, late: true });
    const undo = undoUnansweredFor(late, 15);
    late.undo = undo.undo;
    await expect(attempt(ctx, late, undefined)).resolves.toEqual({ retryInMs: 1 });
    expect(ctx.chains.busy('k', 'o')).toBe(false);
    await ctx.background.settled();
    expect(late.undone).toEqual(late.sent);
  });
});

describe('EngineContext.stateOf', () => {
  it('keeps one state per kind and client: two clients never share it', () => {
    class KindState {
      readonly seen: string[] = [];
    }
    const [a, b] = [context(), context()];
    a.stateOf(KindState, () => new KindState()).seen.push('a');
    expect(a.stateOf(KindState, () => new KindState()).seen).toEqual(['a']);
    expect(b.stateOf(KindState, () => new KindState()).seen).toEqual([]);
  });
});
