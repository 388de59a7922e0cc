/** One owner's turn on one key: busy while an operation runs, then handed to the next in line. */
interface Slot {
  readonly next: (() => void)[];
}

/**
 * Runs one owner's operations on one key one at a time, in call order: a
 * replay after a reconnect can then only be the last one (recognised by its op
 * id), and an undo lands before the next operation. An uncontended turn costs no promise.
 */
export class OwnerChains {
  private readonly slots = new Map<string, Map<string, Slot>>();
  private active = 0;
  private idleWaiters: (() => void)[] = [];

  /**
   * Takes the owner's turn on `key`: undefined when it is free (the caller
   * goes on at once), else a promise that resolves when the turn comes. Every
   * `enter` must be followed by exactly one `leave`.
   */
  enter(key: string, owner: string): Promise<void> | undefined {
    let owners = this.slots.get(key);
    const slot = owners?.get(owner);
    if (slot) return new Promise<void>((resolve) => slot.next.push(resolve));
    if (!owners) {
      owners = new Map();
      this.slots.set(key, owners);
    }
    owners.set(owner, { next: [] });
    this.active++;
    return undefined;
  }

  /** True while an operation of `owner` on `key` is out (or waits its turn). */
  busy(key: string, owner: string): boolean {
    return this.slots.get(key)?.has(owner) === true;
  }

  /** Ends the owner's turn on `key`: the next operation in line runs, or the slot is freed. */
  leave(key: string, owner: string): void {
    const owners = this.slots.get(key);
    const slot = owners?.get(owner);
    if (!owners || !slot) return;
    const next = slot.next.shift();
    if (next) {
      next();
      return;
    }
    owners.delete(owner);
    if (owners.size === 0) this.slots.delete(key);
    if (--this.active === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /** Runs `operation` in the owner's turn on `key`. */
  async run<T>(key: string, owner: string, operation: () => Promise<T>): Promise<T> {
    const turn = this.enter(key, owner);
    if (turn) await turn;
    try {
      return await operation();
    } finally {
      this.leave(key, owner);
    }
  }

  /** Resolves once no operation is in flight (close() waits for it). */
  idle(): Promise<void> {
    if (this.active === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }
}
