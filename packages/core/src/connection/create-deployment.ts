import { Cluster, type ClusterOptions } from 'ioredis';
import { InvalidArgumentError } from '../errors.js';
import { describeValue } from '../checks/argument-checks.js';
import { ClusterDeployment } from './cluster.js';
import { redisUrlOf } from './endpoints.js';
import type { Deployment, SyncReplicas } from './deployment.js';
import type { EmbeddedScript } from './scripts.js';
import { StandaloneDeployment } from './standalone.js';
import { ownedClusterOptions } from './endpoints.js';

/** Cluster options as `createClient` takes them: the nodes to start from, and ioredis's Cluster options. */
export interface ClusterInput extends ClusterOptions {
  /** Startup nodes: `redis://host:port` URLs, `host:port` (or `{ host, port }`); ioredis finds the rest. */
  readonly cluster: readonly (string | { readonly host: string; readonly port: number })[];
}

/** The deployment for a client's `redis` input. @throws InvalidArgumentError for a bad input, or a connection with its own keyPrefix. */
export function createDeployment(
  input: unknown,
  commandTimeoutMs: number,
  scripts: readonly EmbeddedScript[],
  syncReplicas?: SyncReplicas,
  connectionName?: string,
): Deployment {
  if (input !== null && typeof input === 'object' && (input as { isCluster?: unknown }).isCluster === true) {
    const cluster = input as Cluster;
    checkNoKeyPrefix(cluster.options.keyPrefix);
    return new ClusterDeployment(cluster, false, commandTimeoutMs, scripts, syncReplicas);
  }
  // Plain options with `cluster` (a Redis instance has a cluster() method: not this).
  if (
    input !== null &&
    typeof input === 'object' &&
    Object.hasOwn(input, 'cluster') &&
    typeof (input as { defineCommand?: unknown }).defineCommand !== 'function'
  ) {
    const { cluster: nodes, ...options } = input as ClusterInput;
    if (!Array.isArray(nodes) || nodes.length === 0) {
      throw new InvalidArgumentError(`redis.cluster must list at least one node (a redis:// URL, host:port or { host, port }), got ${describeValue(nodes)}`);
    }
    checkNoKeyPrefix(options.keyPrefix);
    // Array.isArray narrowed the readonly list to any[]: its own type back.
    const startup = (nodes as ClusterInput['cluster']).map((node) => {
      if (typeof node !== 'string') return node;
      const href = redisUrlOf(node);
      if (href === undefined) throw new InvalidArgumentError(`redis.cluster: ${describeValue(node)} is not a redis:// or rediss:// URL or host:port`);
      const url = new URL(href);
      return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 6379) };
    });
    return new ClusterDeployment(new Cluster(startup, ownedClusterOptions(options, connectionName)), true, commandTimeoutMs, scripts, syncReplicas);
  }
  return new StandaloneDeployment(input, commandTimeoutMs, scripts, syncReplicas, true, connectionName);
}

function checkNoKeyPrefix(keyPrefix: unknown): void {
  if (keyPrefix !== undefined && keyPrefix !== '') {
    throw new InvalidArgumentError("redis: connections with their own keyPrefix are refused; use rlock's keyPrefix option instead");
  }
}
