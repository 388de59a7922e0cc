import { connectionNameOf, parseClientList } from '../../src/connection/client-names.js';

describe('client connection names', () => {
  const identity = { name: 'night batch: ünïcode', host: 'web-1.example', pid: 4242 };

  it('encode a client as a name CLIENT SETNAME accepts: no space, only `!` to `~`', () => {
    const name = connectionNameOf('P7sfPT_abc123', identity);
    expect(name).toMatch(/^rlock:P7sfPT_abc123:[!-~]+$/);
    expect(name).not.toContain(' ');
  });

  it('are read back from CLIENT LIST, also behind ioredis-cluster’s prefix, skipping other names', () => {
    const name = connectionNameOf('P7sfPT_abc123', identity);
    const reply = [
      `id=3 addr=127.0.0.1:50000 laddr=127.0.0.1:6379 fd=8 name=${name} age=1 idle=0 flags=N db=0`,
      `id=4 addr=127.0.0.1:50001 laddr=127.0.0.1:6379 fd=9 name=ioredis-cluster(ssubscriber):${connectionNameOf('Other_1', { ...identity, pid: 7 })} age=1`,
      'id=5 addr=127.0.0.1:50002 laddr=127.0.0.1:6379 fd=10 name= age=1',
      'id=6 addr=127.0.0.1:50003 laddr=127.0.0.1:6379 fd=11 name=somebody-else age=1',
      'id=7 addr=127.0.0.1:50004 laddr=127.0.0.1:6379 fd=12 name=rlock:Bad:%E0%A4%A:h:1 age=1',
      '',
    ].join('\n');
    expect(parseClientList(reply)).toEqual(
      new Map([
        ['P7sfPT_abc123', identity],
        ['Other_1', { ...identity, pid: 7 }],
      ]),
    );
  });
});
