import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import { DelayQueue } from '../../src/engine/delay-queue.js';
import { gather, type Settled } from '../../src/engine/gather.js';
import { monotonicNow } from '../../src/connection/time.js';

/** A call whose start is recorded and which settles when the test says so. */
function controlled(started: number[], index: number) {
  let settle: (value: string) => void = () => undefined;
  const call = (): Promise<string> => {
    started.push(index);
    return new Promise<string>((resolve) => (settle = resolve));
  };
  return { call, settle: (value: string) => settle(value) };
}

/** Majority of 'yes' among 5 calls, decided as soon as the results so far settle it. */
const yesOfFive = (results: readonly (Settled<string> | undefined)[]): boolean | undefined => {
  const yes = results.filter((result) => result?.ok && result.value === 'yes').length;
  const no = results.filter((result) => result && !(result.ok && result.value === 'yes')).length;
  return yes >= 3 ? true : no > 2 ? false : undefined;
};

describe('gather with a staggered start', () => {
  const timers = new DelayQueue();

  it('starts the first calls only; a verdict from them never starts the others when skip() says so by then', async () => {
    const started: number[] = [];
    const calls = [0, 1, 2, 3, 4].map((index) => controlled(started, index));
    let skip = false;
    const gathering = gather(
      calls.map((c) => c.call),
      yesOfFive,
      undefined,
      undefined,
      { first: [4, 0, 2], afterMs: 5, skip: () => skip, timers },
    );
    expect(started).toEqual([4, 0, 2]);
    for (const index of [4, 0, 2]) calls[index]?.settle('yes');
    expect((await gathering).verdict).toBe(true);
    skip = true; // released before its turn came
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(started).toEqual([4, 0, 2]);
  });

  it('starts the others once the first settled without a verdict, and counts them', async () => {
    const started: number[] = [];
    const calls = [0, 1, 2, 3, 4].map((index) => controlled(started, index));
    const gathering = gather(
      calls.map((c) => c.call),
      yesOfFive,
      undefined,
      undefined,
      { first: [0, 1, 2], afterMs: 60_000, skip: () => false, timers },
    );
    calls[0]?.settle('yes');
    calls[1]?.settle('no');
    calls[2]?.settle('yes');
    await Promise.resolve();
    await Promise.resolve();
    expect(started.sort()).toEqual([0, 1, 2, 3, 4]);
    calls[3]?.settle('yes');
    expect((await gathering).verdict).toBe(true);
  });

  it('starts the others afterMs on when one of the first does not answer, and hands their ends to late after a verdict', async () => {
    const started: number[] = [];
    const calls = [0, 1, 2, 3, 4].map((index) => controlled(started, index));
    const late: number[] = [];
    const begun = monotonicNow();
    const gathering = gather(
      calls.map((c) => c.call),
      yesOfFive,
      undefined,
      (index) => late.push(index),
      { first: [0, 1, 2], afterMs: 20, skip: () => false, timers },
    );
    calls[0]?.settle('yes');
    calls[1]?.settle('yes'); // 2 answers silently
    while (started.length < 5) await new Promise((resolve) => setTimeout(resolve, 2));
    expect(monotonicNow() - begun).toBeGreaterThanOrEqual(19);
    calls[3]?.settle('yes');
    expect((await gathering).verdict).toBe(true);
    calls[2]?.settle('yes');
    calls[4]?.settle('yes');
    await new Promise((resolve) => setImmediate(resolve));
    expect(late.sort()).toEqual([2, 4]);
  });
  it('counts a later call that throws as it starts as failed, instead of letting the throw escape (on a timer, it would)', async () => {
    const started: number[] = [];
    const calls = [0, 1, 2].map((index) => controlled(started, index));
    const throwing = (): Promise<string> => {
      throw new Error('no connection');
    };
    const majorityOfThree = (results: readonly (Settled<string> | undefined)[]): boolean | undefined => {
      const yes = results.filter((result) => result?.ok && result.value === 'yes').length;
      return yes >= 2 ? true : results.filter((result) => result && !result.ok).length > 1 ? false : undefined;
    };
    const gathering = gather(
      [calls[0]?.call as () => Promise<string>, throwing, calls[2]?.call as () => Promise<string>],
      majorityOfThree,
      undefined,
      undefined,
      {
        first: [0],
        afterMs: 5,
        skip: () => false,
        timers,
      },
    );
    calls[0]?.settle('yes'); // alone, not a verdict: the others start now
    while (started.length < 2) await new Promise((resolve) => setTimeout(resolve, 2));
    calls[2]?.settle('yes');
    const { verdict, results } = await gathering;
    expect(verdict).toBe(true);
    expect(results[1]).toEqual({ ok: false, error: new Error('no connection') });
  });
});

describe('DelayQueue', () => {
  it('calls each function once, not before its delay, in the order they fall due', async () => {
    const queue = new DelayQueue();
    const calls: [string, number][] = [];
    const begun = monotonicNow();
    const record = (name: string) => () => calls.push([name, monotonicNow() - begun]);
    queue.add(30, record('c'));
    queue.add(5, record('a'));
    queue.add(15, record('b'));
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(calls.map(([name]) => name)).toEqual(['a', 'b', 'c']);
    calls.forEach(([name, at]) => expect(at).toBeGreaterThanOrEqual(({ a: 5, b: 15, c: 30 }[name] as number) - 1));
  });

  it('runs the others due with a function that throws, then reports its error as uncaught', async () => {
    // In a process of its own (the built module, as the integration tests' children use): an uncaught error
    // inside jest would fail whichever test runs then.
    const module = new URL('../../dist/esm/engine/delay-queue.js', import.meta.url).href;
    const program = [
      `import { DelayQueue } from ${JSON.stringify(module)};`,
      'const queue = new DelayQueue();',
      // Added once the error was reported, so a loaded machine cannot make it due beside the others: the queue still runs after a throw.
      "process.on('uncaughtException', (error) => { console.log(`uncaught ${error.message}`); queue.add(1, () => console.log('later')); });",
      "queue.add(1, () => console.log('first'));",
      "queue.add(1, () => { throw new Error('boom'); });",
      "queue.add(1, () => console.log('third'));",
      'setTimeout(() => undefined, 200);',
    ].join('\n');
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', program]);
    expect(stdout.trim().split('\n')).toEqual(['first', 'third', 'uncaught boom', 'later']);
  });
});
