import { Cluster, type ClusterOptions } from 'ioredis';
import { InvalidArgumentError } from '../errors.js';
import { describeValue } from '../checks/argument-checks.js';
import { ClusterDeployment } from './cluster.js';
import type { Deployment, SyncReplicas } from './deployment.js';
import type { EmbeddedScript } from './scripts.js';
import { StandaloneDeployment } from './standalone.js';
import { checkNoKeyPrefix, ownedClusterOptions, redisUrlOf } from './endpoints.js';

/** Cluster options as `createClient` takes them: the nodes to start from, and ioredis's Cluster options. */
export interface ClusterInput extends ClusterOptions {
  /** Startup nodes: `redis://host:port` URLs, `host:port` (or `{ host, port }`); ioredis finds the rest. */
  readonly cluster: readonly (string | { readonly host: string; readonly port: number })[];
}

/** What every deployment is made with besides the client's `redis` input. */
export interface DeploymentSettings {
  readonly commandTimeoutMs: number;
  readonly scripts: readonly EmbeddedScript[];
  readonly syncReplicas?: SyncReplicas | undefined;
  /** CLIENT SETNAME of the connections rlock creates. */
  readonly connectionName?: string | undefined;
}

/** The deployments a `redis` input can make, told apart by {@link deploymentKindOf}. */
export type DeploymentKind = 'cluster instance' | 'cluster options' | 'standalone';

/**
 * Which deployment `input` makes, by its shape alone (it is checked when made): an ioredis `Cluster` (used as it is, left open on
 * close); plain options with `cluster` (rlock makes and owns the Cluster; a `Redis` instance has a cluster() method of its own:
 * not this); anything else, a URL, `host:port`, ioredis options (Sentinel's too) or a `Redis`, as one Redis, checked when made.
 */
export function deploymentKindOf(input: unknown): DeploymentKind {
  if (input === null || typeof input !== 'object') return 'standalone';
  if ((input as { isCluster?: unknown }).isCluster === true) return 'cluster instance';
  const options = Object.hasOwn(input, 'cluster') && typeof (input as { defineCommand?: unknown }).defineCommand !== 'function';
  return options ? 'cluster options' : 'standalone';
}

/** The deployment for a client's `redis` input. @throws InvalidArgumentError for a bad input, or a connection with its own keyPrefix. */
export function createDeployment(input: unknown, { commandTimeoutMs, scripts, syncReplicas, connectionName }: DeploymentSettings): Deployment {
  const kind = deploymentKindOf(input);
  if (kind === 'standalone') return new StandaloneDeployment(input, commandTimeoutMs, scripts, syncReplicas, true, connectionName);
  if (kind === 'cluster instance') {
    checkNoKeyPrefix((input as Cluster).options.keyPrefix, 'redis');
    return new ClusterDeployment(input as Cluster, false, commandTimeoutMs, scripts, syncReplicas);
  }
  const { cluster: nodes, ...options } = input as ClusterInput;
  if (!Array.isArray(nodes) || nodes.length === 0) {
    throw new InvalidArgumentError(`redis.cluster must list at least one node (a redis:// URL, host:port or { host, port }), got ${describeValue(nodes)}`);
  }
  checkNoKeyPrefix(options.keyPrefix, 'redis');
  // Array.isArray narrowed the readonly list to any[]: its own type back.
  const startup = (nodes as ClusterInput['cluster']).map(startupNode);
  return new ClusterDeployment(new Cluster(startup, ownedClusterOptions(options, connectionName)), true, commandTimeoutMs, scripts, syncReplicas);
}

/** A node of `redis.cluster` as ioredis takes it. @throws InvalidArgumentError for a string that is no URL or host:port. */
function startupNode(node: ClusterInput['cluster'][number]): { readonly host: string; readonly port: number } {
  if (typeof node !== 'string') return node;
  const href = redisUrlOf(node);
  if (href === undefined) throw new InvalidArgumentError(`redis.cluster: ${describeValue(node)} is not a redis:// or rediss:// URL or host:port`);
  const url = new URL(href);
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 6379) };
}
