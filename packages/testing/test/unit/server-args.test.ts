import { buildServerArgs } from '../../src/server-args.js';

const BASE = {
  port: 40000,
  dir: '/tmp/d',
  logfile: '/tmp/d/redis.log',
  bind: '127.0.0.1',
  appendonly: false,
  appendfsync: 'everysec' as const,
  debugCommandFlag: true,
  extraArgs: ['--maxmemory', '10mb'],
};

describe('buildServerArgs', () => {
  it('puts a config file first, so the command-line options win over it', () => {
    const args = buildServerArgs({ ...BASE, configFile: '/tmp/d/redis.conf' });
    expect(args[0]).toBe('/tmp/d/redis.conf');
    expect(args.slice(1, 3)).toEqual(['--port', '40000']);
  });

  it('adds --sentinel before the extra arguments', () => {
    const args = buildServerArgs({ ...BASE, configFile: '/tmp/d/redis.conf', sentinel: true });
    expect(args.slice(-3)).toEqual(['--sentinel', '--maxmemory', '10mb']);
  });

  it('is unchanged without either', () => {
    const args = buildServerArgs(BASE);
    expect(args[0]).toBe('--port');
    expect(args).not.toContain('--sentinel');
  });
});
