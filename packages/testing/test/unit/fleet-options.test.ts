import { FLEET_DEFAULTS, resolveFleetOptions } from '../../src/fleet-options.js';

describe('resolveFleetOptions', () => {
  describe('defaults', () => {
    it('applies every default when given nothing', () => {
      expect(resolveFleetOptions({}, {})).toEqual({
        size: 1,
        appendonly: false,
        appendfsync: 'everysec',
        backend: 'auto',
        redisServerPath: 'redis-server',
        extraArgs: [],
      });
      expect(Object.isFrozen(FLEET_DEFAULTS)).toBe(true);
    });
  });

  describe('environment', () => {
    it('takes REDIS_SERVER when no redisServerPath is given', () => {
      expect(resolveFleetOptions({}, { REDIS_SERVER: '/opt/redis/bin/redis-server' }).redisServerPath).toBe('/opt/redis/bin/redis-server');
      expect(resolveFleetOptions({ redisServerPath: '/x' }, { REDIS_SERVER: '/y' }).redisServerPath).toBe('/x');
    });

    it('lets RLOCK_FLEET_BACKEND override auto but not an explicit backend', () => {
      expect(resolveFleetOptions({}, { RLOCK_FLEET_BACKEND: 'container' }).backend).toBe('container');
      expect(resolveFleetOptions({ backend: 'auto' }, { RLOCK_FLEET_BACKEND: 'process' }).backend).toBe('process');
      expect(resolveFleetOptions({ backend: 'process' }, { RLOCK_FLEET_BACKEND: 'container' }).backend).toBe('process');
    });

    it('rejects an unknown RLOCK_FLEET_BACKEND', () => {
      expect(() => resolveFleetOptions({}, { RLOCK_FLEET_BACKEND: 'podman' })).toThrow(/RLOCK_FLEET_BACKEND/);
    });
  });

  describe('validation', () => {
    it.each([
      [{ size: 0 }, /size/],
      [{ size: 65 }, /size/],
      [{ size: Number.NaN }, /size/],
      [{ appendonly: 'yes' }, /appendonly/],
      [{ appendfsync: 'sometimes' }, /appendfsync/],
      [{ backend: 'docker' }, /backend/],
      [{ redisServerPath: '' }, /redisServerPath/],
      [{ extraArgs: '--maxmemory 10mb' }, /extraArgs/],
    ])('rejects %j', (options, message) => {
      expect(() => resolveFleetOptions(options as never, {})).toThrow(message);
    });
  });
});
