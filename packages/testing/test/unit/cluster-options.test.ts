import { CLUSTER_DEFAULTS, resolveClusterOptions } from '../../src/cluster-options.js';

describe('resolveClusterOptions', () => {
  describe('defaults', () => {
    it('applies every default when given nothing', () => {
      expect(resolveClusterOptions({}, {})).toEqual({
        masters: 3,
        replicasPerMaster: 1,
        nodeTimeoutMs: 1_000,
        waitTimeoutMs: 30_000,
        redisCliPath: 'redis-cli',
        appendonly: false,
        appendfsync: 'everysec',
        redisServerPath: 'redis-server',
        extraArgs: [],
      });
      expect(Object.isFrozen(CLUSTER_DEFAULTS)).toBe(true);
    });

    it('takes REDIS_CLI and REDIS_SERVER from the environment unless given', () => {
      const env = { REDIS_CLI: '/opt/redis/redis-cli', REDIS_SERVER: '/opt/redis/redis-server' };
      expect(resolveClusterOptions({}, env)).toMatchObject({ redisCliPath: env.REDIS_CLI, redisServerPath: env.REDIS_SERVER });
      expect(resolveClusterOptions({ redisCliPath: '/x' }, env).redisCliPath).toBe('/x');
    });
  });

  describe('validation', () => {
    it.each([
      [{ masters: 2 }, /masters/],
      [{ masters: 17 }, /masters/],
      [{ replicasPerMaster: -1 }, /replicasPerMaster/],
      [{ replicasPerMaster: 1.5 }, /replicasPerMaster/],
      [{ nodeTimeoutMs: 50 }, /nodeTimeoutMs/],
      [{ waitTimeoutMs: '30s' }, /waitTimeoutMs/],
      [{ redisCliPath: '' }, /redisCliPath/],
      [{ appendfsync: 'sometimes' }, /appendfsync/],
      [{ extraArgs: [1] }, /extraArgs/],
    ])('rejects %j', (options, message) => {
      expect(() => resolveClusterOptions(options as never, {})).toThrow(message);
    });
  });
});
