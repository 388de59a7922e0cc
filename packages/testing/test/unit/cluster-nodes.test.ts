import { parseClusterNodes, slotInRanges } from '../../src/cluster-nodes.js';

// Shapes as redis-server 7.0 prints them, plus a migration and a handshake.
const REPLY = [
  'e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-5460',
  '67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@40002,host-2 master - 0 1426238316232 2 connected 5461-10922 [5461->-e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca]',
  '292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@40003 master,fail - 1426238316232 1426238315232 3 disconnected 10923 10924-16383',
  '6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30005@40005 slave,fail? 67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1426238316232 5 connected',
  'a211e242fc6b22a9427fed61285e85892fa04e08 :0@0 handshake - 1426238316232 0 0 disconnected',
  '',
].join('\n');

describe('parseClusterNodes', () => {
  it('reads id, address, role, master, flags and slots of every line', () => {
    const [myself, second, failed, replica, joining] = parseClusterNodes(REPLY);
    expect(myself).toEqual({
      id: 'e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca',
      host: '127.0.0.1',
      port: 30001,
      role: 'master',
      masterId: undefined,
      myself: true,
      failing: false,
      joining: false,
      slots: [[0, 5460]],
    });
    expect(second?.slots).toEqual([[5461, 10922]]);
    expect(second?.port).toBe(30002);
    expect(failed).toMatchObject({
      failing: true,
      slots: [
        [10923, 10923],
        [10924, 16383],
      ],
    });
    expect(replica).toMatchObject({ role: 'replica', masterId: second?.id, failing: true, slots: [] });
    expect(joining).toMatchObject({ role: undefined, joining: true });
  });

  it('rejects a line of another shape', () => {
    expect(() => parseClusterNodes('not a cluster nodes line')).toThrow(/CLUSTER NODES/);
  });
});

describe('slotInRanges', () => {
  it('includes both ends of a range', () => {
    expect(slotInRanges(0, [[0, 5460]])).toBe(true);
    expect(slotInRanges(5460, [[0, 5460]])).toBe(true);
    expect(slotInRanges(5461, [[0, 5460]])).toBe(false);
    expect(slotInRanges(7, [])).toBe(false);
  });
});
