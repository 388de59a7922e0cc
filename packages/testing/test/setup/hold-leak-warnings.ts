import { captureHoldLeakWarnings, takeHoldLeakWarnings } from '@org/rlock-testing';

// Every jest test file: a task that ends holding a lock warns RLOCK_HOLD_LEAKED. Tests that leak on purpose
// take and assert their warnings; any other fails the test it came in, instead of scrolling past on stderr.
captureHoldLeakWarnings();

afterEach(() => {
  const left = takeHoldLeakWarnings();
  if (left.length > 0) {
    const names = left.map(({ name, count }) => `"${name}" (${count})`).join(', ');
    throw new Error(`${left.length} RLOCK_HOLD_LEAKED warning(s) no test asserted, for ${names}:\n${left.map(({ message }) => message).join('\n')}`);
  }
});
