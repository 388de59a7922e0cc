import type { EngineContext } from '../engine/engine-context.js';
import { checkCount } from '../checks/count-checks.js';
import { opMarker } from './names.js';

/** What both semaphores' stores do alike: a count of permits set once, added to and read, each change marked by its op. */
export interface PermitCountStore<K> {
  trySetPermits(keys: K, marker: string, permits: number): Promise<boolean>;
  addPermits(keys: K, marker: string, delta: number): Promise<number>;
  available(keys: K): Promise<number>;
}

/** The calls both semaphores share: setting, adding to and reading the count, checked before anything is sent. */
export abstract class PermitCount<K extends { readonly permits: string }, S extends PermitCountStore<K>> {
  constructor(
    readonly name: string,
    protected readonly ctx: EngineContext,
    protected readonly store: S,
    readonly keys: K,
  ) {}

  async trySetPermits(permits: number): Promise<boolean> {
    const checked = checkCount(permits, 'trySetPermits(): permits');
    this.ctx.assertOpen();
    return this.store.trySetPermits(this.keys, this.newMarker(), checked);
  }

  async addPermits(delta: number): Promise<number> {
    const checked = checkCount(delta, 'addPermits(): delta', true);
    this.ctx.assertOpen();
    return this.store.addPermits(this.keys, this.newMarker(), checked);
  }

  async availablePermits(): Promise<number> {
    this.ctx.assertOpen();
    return this.store.available(this.keys);
  }

  protected newMarker(): string {
    return opMarker(this.keys.permits, this.ctx.clientId, this.ctx.newOpId());
  }
}
