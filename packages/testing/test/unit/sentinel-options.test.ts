import { resolveSentinelGroupOptions, SENTINEL_GROUP_DEFAULTS } from '../../src/sentinel-options.js';

describe('resolveSentinelGroupOptions', () => {
  describe('defaults', () => {
    it('applies every default when given nothing, quorum a majority', () => {
      expect(resolveSentinelGroupOptions({}, {})).toEqual({
        replicas: 1,
        sentinels: 3,
        masterName: 'mymaster',
        quorum: 2,
        downAfterMs: 1_000,
        failoverTimeoutMs: 3_000,
        waitTimeoutMs: 30_000,
        appendonly: false,
        appendfsync: 'everysec',
        redisServerPath: 'redis-server',
        extraArgs: [],
      });
      expect(resolveSentinelGroupOptions({ sentinels: 5 }, {}).quorum).toBe(3);
      expect(resolveSentinelGroupOptions({ sentinels: 1 }, {}).quorum).toBe(1);
      expect(Object.isFrozen(SENTINEL_GROUP_DEFAULTS)).toBe(true);
    });
  });

  describe('validation', () => {
    it.each([
      [{ replicas: 9 }, /replicas/],
      [{ sentinels: 0 }, /sentinels/],
      [{ masterName: 'my master' }, /masterName/],
      [{ masterName: '' }, /masterName/],
      [{ quorum: 4 }, /quorum/],
      [{ downAfterMs: 10 }, /downAfterMs/],
      [{ failoverTimeoutMs: 999 }, /failoverTimeoutMs/],
      [{ appendonly: 'yes' }, /appendonly/],
    ])('rejects %j', (options, message) => {
      expect(() => resolveSentinelGroupOptions(options as never, {})).toThrow(message);
    });
  });
});
