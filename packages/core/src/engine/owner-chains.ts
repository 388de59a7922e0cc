/** The operations waiting behind one owner's turn on one key, in call order: made when the first waits. */
interface Turn {
  readonly next: (() => void)[];
}

/** A key's turns: one owner's id while it alone has one and nobody waits, else by owner (null: nobody waits behind it). */
type Slot = string | Map<string, Turn | null>;

/**
 * One owner's operations on one key, one at a time in call order: a replay after a reconnect can only be the last one
 * (known by its op id), and an undo lands before the next operation. An uncontended turn costs no promise, nor any object.
 */
export class OwnerChains {
  private readonly slots = new Map<string, Slot>();
  private active = 0;
  private idleWaiters: (() => void)[] = [];

  /** Undefined when the turn is free (go on at once), else resolves when it comes; every `enter` needs exactly one `leave`. */
  enter(key: string, owner: string): Promise<void> | undefined {
    const slot = this.slots.get(key);
    if (slot === undefined) this.slots.set(key, owner);
    else {
      // Someone else has a turn on the key, or the owner itself: turns by owner from now on.
      const owners = typeof slot === 'string' ? new Map<string, Turn | null>([[slot, null]]) : slot;
      if (owners !== slot) this.slots.set(key, owners);
      const turn = owners.get(owner);
      if (turn !== undefined) {
        const line = turn ?? { next: [] };
        owners.set(owner, line);
        return new Promise<void>((resolve) => line.next.push(resolve));
      }
      owners.set(owner, null);
    }
    this.active++;
    return undefined;
  }

  /** True while an operation of `owner` on `key` is out (or waits its turn). */
  busy(key: string, owner: string): boolean {
    const slot = this.slots.get(key);
    return typeof slot === 'string' ? slot === owner : slot?.has(owner) === true;
  }

  /** Ends the owner's turn on `key`: the next operation in line runs, or the slot is freed. */
  leave(key: string, owner: string): void {
    const slot = this.slots.get(key);
    if (typeof slot === 'string') {
      if (slot !== owner) return;
      this.slots.delete(key);
    } else {
      const turn = slot?.get(owner);
      if (slot === undefined || turn === undefined) return;
      const next = turn?.next.shift();
      if (next) {
        next();
        return;
      }
      slot.delete(owner);
      if (slot.size === 0) this.slots.delete(key);
    }
    if (--this.active === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

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
