import { holdFields, parseHold, type HoldRecord } from '../../src/objects/lock/hold-record.js';

describe('a hold as its hash stores it (hold-record)', () => {
  const holds: HoldRecord[] = [
    { owner: 'c:t1', count: 1, token: '1764400000123456', op: '2f', once: false },
    { owner: 'c:t1', count: 3, token: '9007199254740991', op: 'a', once: false },
    { owner: 'c:t1', count: 1, token: '17', op: 'x', once: true },
    // A fair lock's hold handed over and not yet claimed: count 0, no op.
    { owner: 'c:t1', count: 0, token: '17', once: false },
  ];

  it('reads back what it writes: the owner field with its count, t, o, and n on a non-reentrant hold', () => {
    expect(holdFields(holds[0] as HoldRecord)).toEqual({ 'c:t1': '1', t: '1764400000123456', o: '2f' });
    expect(holdFields(holds[2] as HoldRecord)).toEqual({ 'c:t1': '1', t: '17', o: 'x', n: '1' });
    expect(holdFields(holds[3] as HoldRecord)).toEqual({ 'c:t1': '0', t: '17' });
    for (const hold of holds) expect(parseHold(holdFields(hold))).toEqual(hold);
  });

  it('reads no hold from a hash with no owner, no token, two owners, a field it does not know, or a value that does not parse', () => {
    for (const fields of [
      {},
      { t: '17' },
      { 'c:t1': '1' },
      { 'c:t1': '1', 'd:t1': '1', t: '17' },
      { 'c:t1': '1', t: '17', mode: 'read' },
      { 'c:t1': 'one', t: '17' },
      { 'c:t1': '-1', t: '17' },
      { 'c:t1': '1', t: '1e400' },
      { 'c:t1': '1', t: '' },
      { 'c:t1': '1', t: '17', n: 'yes' },
      // An owner is <clientId>:<taskId>: a field without ':' is none.
      { owner: '1', t: '17' },
    ]) {
      expect(parseHold(fields)).toBeUndefined();
    }
    expect(parseHold(null)).toBeUndefined();
  });
});
