import { getEventListeners } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import { onAbort } from '../../src/tasks/abort-fan-out.js';

describe('onAbort', () => {
  it('puts one listener on a signal however many wait on it, runs each callback once on abort, and none that stopped', () => {
    const controller = new AbortController();
    const ran: number[] = [];
    const stops = Array.from({ length: 50 }, (_, i) => onAbort(controller.signal, () => ran.push(i)));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    stops[3]?.();
    controller.abort();
    expect(ran).toEqual(Array.from({ length: 50 }, (_, i) => i).filter((i) => i !== 3));
    controller.abort();
    expect(ran).toHaveLength(49);
  });

  it('takes its listener off once the last wait on the signal stopped, and puts it back for the next', () => {
    const controller = new AbortController();
    const stops = [onAbort(controller.signal, () => undefined), onAbort(controller.signal, () => undefined)];
    for (const stop of stops) stop();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    let ran = false;
    onAbort(controller.signal, () => (ran = true));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort();
    expect(ran).toBe(true);
  });
});
