import { Cluster, Redis } from 'ioredis';
import { InvalidArgumentError } from '../../src/errors.js';
import { createDeployment, deploymentKindOf } from '../../src/connection/create-deployment.js';

describe('deployment kinds', () => {
  it('picks the kind from the shape of the input', () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    const redis = new Redis({ lazyConnect: true });
    try {
      expect(deploymentKindOf(cluster)).toBe('cluster instance');
      expect(deploymentKindOf({ cluster: ['127.0.0.1:1'] })).toBe('cluster options');
      // A Redis instance has a cluster() method of its own prototype: no Cluster.
      expect(deploymentKindOf(redis)).toBe('standalone');
      for (const input of ['redis://127.0.0.1:1', '127.0.0.1:1', { host: '127.0.0.1' }, { sentinels: [{ host: '127.0.0.1', port: 1 }], name: 'm' }]) {
        expect(deploymentKindOf(input)).toBe('standalone');
      }
      // Bad inputs reach a kind that refuses them when made: the standalone deployment's checks.
      for (const input of [undefined, null, 7, [], { isCluster: 'yes' }]) expect(deploymentKindOf(input)).toBe('standalone');
    } finally {
      cluster.disconnect();
      redis.disconnect();
    }
  });

  it('refuses the bad input of each kind before connecting', () => {
    expect(() => createDeployment({ cluster: [] }, { commandTimeoutMs: 1_000, scripts: [] })).toThrow(/redis\.cluster must list at least one node/);
    expect(() => createDeployment({ cluster: ['127.0.0.1:1'], keyPrefix: 'app:' }, { commandTimeoutMs: 1_000, scripts: [] })).toThrow(
      /own keyPrefix are refused/,
    );
    const prefixed = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true, keyPrefix: 'app:' });
    try {
      expect(() => createDeployment(prefixed, { commandTimeoutMs: 1_000, scripts: [] })).toThrow(InvalidArgumentError);
    } finally {
      prefixed.disconnect();
    }
    expect(() => createDeployment(7, { commandTimeoutMs: 1_000, scripts: [] })).toThrow(/redis must be a URL, ioredis options or an ioredis instance/);
  });
});
