import { replicated, type Deployment } from '../connection/deployment.js';
import type { EmbeddedScript } from '../connection/scripts.js';
import type { Transport } from '../connection/transport.js';
import type { EngineContext } from '../engine/engine-context.js';
import type { RenewOutcome } from '../engine/renewal.js';

export const isOne = (reply: unknown): boolean => reply === 1;

/** A renew script's reply: one code per item. */
export const asCodes = (reply: unknown): number[] => reply as number[];

/** A renew.lua script's code for one hold: 1 renewed, 0 gone, anything else (−1, none) taken. */
export function renewOutcome(code: number | undefined): RenewOutcome {
  return code === 1 ? 'renewed' : code === 0 ? 'gone' : 'taken';
}

export abstract class ObjectStore {
  protected readonly transport: Transport;
  /** '1': scripts announce with SPUBLISH (Cluster), '0' with PUBLISH. */
  protected readonly sharded: string;

  constructor(
    readonly deployment: Deployment,
    /** How long an operation's markers live, ms: a replay arrives within it. */
    protected readonly replayWindowMs: number,
  ) {
    this.transport = deployment.transport;
    this.sharded = deployment.sharded ? '1' : '0';
  }

  /** With syncReplicas, resolves once replicas have a write that `wrote` reports. */
  protected write<A, T>(
    script: EmbeddedScript<A>,
    args: NoInfer<A>,
    what: string,
    key: string,
    parse: (reply: unknown) => T,
    wrote: (value: T) => boolean,
  ): Promise<T> {
    return replicated(this.deployment, key, this.transport.run(script, args, what, key, parse), wrote);
  }

  /** With syncReplicas, once replicas have it: else the watchdog retries, and the hold is lost at its deadline. */
  protected async renewed(codes: readonly number[], key: string): Promise<RenewOutcome[]> {
    if (this.deployment.syncsReplicas) await this.deployment.afterWrite(key);
    return codes.map((code) => renewOutcome(code));
  }
}

/** A store whose calls read the client's context (its id, watchdog lease, holds and queues): a lock family's scripts. */
export abstract class ContextStore extends ObjectStore {
  constructor(
    deployment: Deployment,
    protected readonly ctx: EngineContext,
  ) {
    super(deployment, ctx.commandTimeoutMs);
  }
}
