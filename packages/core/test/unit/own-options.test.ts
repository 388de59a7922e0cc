import { describe, expect, it } from '@jest/globals';
import { parseLockOptions } from '../../src/objects/lock-options.js';
import { parseWaitOptions } from '../../src/objects/wait-options.js';
import { checkName } from '../../src/objects/names.js';

describe('options are own properties', () => {
  it('does not honour an option inherited through the prototype', () => {
    expect(parseLockOptions({ __proto__: { leaseMs: 5 } }, 'lock').leaseMs).toBeUndefined();
    expect(parseLockOptions({ __proto__: { waitMs: 0 }, leaseMs: 10 }, 'lock')).toMatchObject({ leaseMs: 10, waitMs: undefined });
    expect(parseWaitOptions({ __proto__: { waitMs: 0 } }, 'acquire').waitMs).toBeUndefined();
  });

  it('does not honour an option a polluted Object.prototype carries', () => {
    const polluted = Object.prototype as Record<string, unknown>;
    polluted.leaseMs = 5;
    polluted.waitMs = 0;
    try {
      expect(parseLockOptions({}, 'lock')).toMatchObject({ leaseMs: undefined, waitMs: undefined });
      expect(parseLockOptions(undefined, 'lock')).toMatchObject({ leaseMs: undefined, waitMs: undefined });
      expect(parseWaitOptions({}, 'acquire').waitMs).toBeUndefined();
    } finally {
      delete polluted.leaseMs;
      delete polluted.waitMs;
    }
  });

  it('still reads own options, and refuses unknown own ones', () => {
    expect(parseLockOptions({ leaseMs: 5, waitMs: 0 }, 'lock')).toMatchObject({ leaseMs: 5, waitMs: 0 });
    expect(() => parseLockOptions({ leaseMS: 5 }, 'lock')).toThrow(/unknown option "leaseMS"/);
    // JSON.parse makes "__proto__" an own key: an unknown option, not a prototype.
    expect(() => parseLockOptions(JSON.parse('{"__proto__": {"leaseMs": 5}}'), 'lock')).toThrow(/unknown option "__proto__"/);
  });
});

describe('names are well-formed Unicode', () => {
  it('names the escaped surrogate in the message', () => {
    expect(() => checkName('a\uD800')).toThrow('lock name must be well-formed Unicode (a lone surrogate would reach Redis as U+FFFD), got "a\\ud800"');
  });
});
