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

/** One kind of deployment: which `redis` inputs are its, and how it is made from one. */
export interface DeploymentKind {
  /** What the kind is called (in tests and when debugging which kind took an input). */
  readonly name: string;
  /** Whether `input` is of this kind, by its shape alone (it is checked when made). */
  recognises(input: unknown): boolean;
  /** @throws InvalidArgumentError for a bad input of this kind, before connecting. */
  create(input: unknown, settings: DeploymentSettings): Deployment;
}

/** An ioredis `Cluster` made by the caller: used as it is, and left open on close. */
const CLUSTER_INSTANCE: DeploymentKind = {
  name: 'cluster instance',
  recognises: (input) => isObject(input) && (input as { isCluster?: unknown }).isCluster === true,
  create: (input, { commandTimeoutMs, scripts, syncReplicas }) => {
    checkNoKeyPrefix((input as Cluster).options.keyPrefix, 'redis');
    return new ClusterDeployment(input as Cluster, false, commandTimeoutMs, scripts, syncReplicas);
  },
};

/** Plain options with `cluster` (a `Redis` instance has a cluster() method: not this): rlock makes and owns the Cluster. */
const CLUSTER_OPTIONS: DeploymentKind = {
  name: 'cluster options',
  recognises: (input) => isObject(input) && Object.hasOwn(input, 'cluster') && typeof (input as { defineCommand?: unknown }).defineCommand !== 'function',
  create: (input, { commandTimeoutMs, scripts, syncReplicas, connectionName }) => {
    const { cluster: nodes, ...options } = input as ClusterInput;
    if (!Array.isArray(nodes) || nodes.length === 0) {
      throw new InvalidArgumentError(`redis.cluster must list at least one node (a redis:// URL, host:port or { host, port }), got ${describeValue(nodes)}`);
    }
    checkNoKeyPrefix(options.keyPrefix, 'redis');
    // Array.isArray narrowed the readonly list to any[]: its own type back.
    const startup = (nodes as ClusterInput['cluster']).map(startupNode);
    return new ClusterDeployment(new Cluster(startup, ownedClusterOptions(options, connectionName)), true, commandTimeoutMs, scripts, syncReplicas);
  },
};

/** Anything else: a URL, `host:port`, ioredis options (Sentinel's too) or a `Redis`, checked by the deployment. */
const STANDALONE: DeploymentKind = {
  name: 'standalone',
  recognises: () => true,
  create: (input, { commandTimeoutMs, scripts, syncReplicas, connectionName }) =>
    new StandaloneDeployment(input, commandTimeoutMs, scripts, syncReplicas, true, connectionName),
};

/** The deployment kinds, asked in order: the first that recognises an input makes its deployment (a new kind: one entry before STANDALONE, which takes any input). */
export const DEPLOYMENT_KINDS: readonly DeploymentKind[] = Object.freeze([CLUSTER_INSTANCE, CLUSTER_OPTIONS, STANDALONE]);

/** The deployment for a client's `redis` input. @throws InvalidArgumentError for a bad input, or a connection with its own keyPrefix. */
export function createDeployment(input: unknown, settings: DeploymentSettings): Deployment {
  return deploymentKindOf(input).create(input, settings);
}

/** The first kind that recognises `input` (STANDALONE, the last, takes any). */
export function deploymentKindOf(input: unknown): DeploymentKind {
  return DEPLOYMENT_KINDS.find((candidate) => candidate.recognises(input)) as DeploymentKind;
}

/** A node of `redis.cluster` as ioredis takes it. @throws InvalidArgumentError for a string that is no URL or host:port. */
function startupNode(node: ClusterInput['cluster'][number]): { readonly host: string; readonly port: number } {
  if (typeof node !== 'string') return node;
  const href = redisUrlOf(node);
  if (href === undefined) throw new InvalidArgumentError(`redis.cluster: ${describeValue(node)} is not a redis:// or rediss:// URL or host:port`);
  const url = new URL(href);
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 6379) };
}

function isObject(input: unknown): input is object {
  return input !== null && typeof input === 'object';
}
