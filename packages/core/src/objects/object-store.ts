import type { Deployment } from '../connection/deployment.js';
import type { Transport } from '../connection/transport.js';

/** A script's 1 (done, granted, set) as a boolean. */
export const isOne = (reply: unknown): boolean => reply === 1;

/**
 * What every object's store keeps of its deployment: the transport every call
 * goes through (batched, bounded by commandTimeoutMs, typed errors), and the
 * scripts' `sharded` argument.
 */
export abstract class ObjectStore {
  protected readonly transport: Transport;
  /** '1': scripts announce with SPUBLISH (Cluster), '0' with PUBLISH. */
  protected readonly sharded: string;

  constructor(
    readonly deployment: Deployment,
    /** How long an operation's markers live, in ms (a replay arrives within it). */
    protected readonly replayWindowMs: number,
  ) {
    this.transport = deployment.transport;
    this.sharded = deployment.sharded ? '1' : '0';
  }
}
