import { jest } from '@jest/globals';
import { takeHoldLeakWarnings } from '@org/rlock-testing';

const leakMessage = (name: string, count: number): string =>
  `rlock: a task (t1, started by client.task()) ended still holding "${name}" (${count} acquisition${count === 1 ? '' : 's'}, owner c:t1): …`;

/** Waits for what process.emitWarning schedules: Node prints a warning on a later tick. */
const printed = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('RLOCK_HOLD_LEAKED warnings in jest', () => {
  // What Node prints for a warning goes to stderr.
  let stderr: string[];
  beforeEach(() => {
    stderr = [];
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => stderr.push(String(chunk)) > 0);
  });
  afterEach(() => jest.restoreAllMocks());

  it('are kept off stderr and handed to the test that takes them', async () => {
    process.emitWarning(leakMessage('order:1', 2), { code: 'RLOCK_HOLD_LEAKED' });
    process.emitWarning(leakMessage('a "quoted" name', 1), { code: 'RLOCK_HOLD_LEAKED', detail: 'acquired at …' });
    process.emitWarning('a neighbour', { code: 'SOME_OTHER_CODE' });
    await printed();
    expect(stderr.join('')).toContain('[SOME_OTHER_CODE] Warning: a neighbour');
    expect(stderr.join('')).not.toContain('RLOCK_HOLD_LEAKED');
    expect(takeHoldLeakWarnings()).toMatchObject([
      { name: 'order:1', count: 2 },
      { name: 'a "quoted" name', count: 1 },
    ]);
    expect(takeHoldLeakWarnings()).toEqual([]);
  });

  it('let every other warning through', async () => {
    process.emitWarning('something else', { code: 'SOME_OTHER_CODE' });
    process.emitWarning('legacy form', 'Warning', 'LEGACY_CODE');
    await printed();
    expect(stderr.join('')).toMatch(/\[SOME_OTHER_CODE\] Warning: something else[\s\S]*\[LEGACY_CODE\] Warning: legacy form/);
    expect(takeHoldLeakWarnings()).toEqual([]);
  });
});
