import { execFile } from 'node:child_process';

const OUTPUT_KEPT_CHARS = 4_096;

/**
 * Runs `redis-cli --cluster create <host:port…> --cluster-replicas <n>
 * --cluster-yes`: assigns the 16384 slots evenly to the first
 * `addresses.length / (replicas + 1)` nodes, makes the others their
 * replicas, and waits until the nodes agree on that configuration
 * (https://redis.io/docs/latest/operate/oss_and_stack/management/scaling/#create-a-redis-cluster).
 * It does not wait for `cluster_state:ok` everywhere nor for replicas to sync:
 * the caller polls for that.
 * @throws Error naming REDIS_CLI when redis-cli cannot be run, or carrying
 * redis-cli's output when it fails or exceeds `timeoutMs`.
 */
export function createCluster(redisCliPath: string, addresses: readonly string[], replicasPerMaster: number, timeoutMs: number): Promise<void> {
  const args = ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicasPerMaster), '--cluster-yes'];
  return new Promise((resolve, reject) => {
    execFile(redisCliPath, args, { timeout: timeoutMs, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      if (error === null) {
        // redis-cli may exit 0 after printing "[ERR]" lines in some versions.
        if (!/\[ERR\]/.test(stdout)) {
          resolve();
          return;
        }
      }
      if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT') {
        reject(
          new Error(`cannot run redis-cli at '${redisCliPath}'; install Redis, set REDIS_CLI or the redisCliPath option`, {
            cause: error,
          }),
        );
        return;
      }
      const output = `${stdout}\n${stderr}`.trim().slice(-OUTPUT_KEPT_CHARS);
      const what = error?.killed === true ? `did not finish within ${timeoutMs} ms` : 'failed';
      reject(new Error(`redis-cli --cluster create ${what}:\n${output}`, error === null ? undefined : { cause: error }));
    });
  });
}
