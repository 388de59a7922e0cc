import type { Cluster, Redis } from 'ioredis';
import { connect } from '../../src/cli/connection.js';

// What the CLI's own connections must not do: send a command again after the connection it was written to
// closed (it may have run: `unlock` twice could free a lock someone took in between).
describe('the CLI connection', () => {
  it('never resends a command whose connection closed, on one server or a Cluster', async () => {
    // Port 1 refuses at once: nothing here needs a server.
    for (const flags of [{ redis: '127.0.0.1:1' }, { cluster: '127.0.0.1:1' }]) {
      const connection = connect({ ...flags, prefix: 'rlock', timeout: 200 });
      try {
        const redis = connection.client.redis;
        if (redis.isCluster) {
          const cluster = redis as Cluster;
          expect(cluster.options.retryDelayOnFailover).toBe(0);
          expect(cluster.options.redisOptions?.autoResendUnfulfilledCommands).toBe(false);
        } else {
          expect((redis as Redis).options.autoResendUnfulfilledCommands).toBe(false);
        }
      } finally {
        await connection.close();
      }
    }
  });
});
