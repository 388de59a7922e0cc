/** One owner's turn on one key: busy while an operation runs, then handed to the next in line (made on the first to wait). */
interface Turn {
  readonly owner: string;
  next: (() => void)[] | undefined;
}

function turnIn(slot: Turn | Map<string, Turn> | undefined, owner: string): Turn | undefined {
  if (slot === undefined) return undefined;
  if (slot instanceof Map) return slot.get(owner);
  return slot.owner === owner ? slot : undefined;
}

/**
 * One owner's operations on one key, one at a time in call order: a replay after a reconnect can only be the last one
 * (known by its op id), and an undo lands before the next operation. An uncontended turn costs no promise.
 */
export class OwnerChains {
  /** A key's turn when one owner has one (the usual case: one object, no Map), else its turns by owner. */
  private readonly slots = new Map<string, Turn | Map<string, Turn>>();
  private active = 0;
  private idleWaiters: (() => void)[] = [];

  /** Undefined when the turn is free (go on at once), else resolves when it comes; every `enter` needs exactly one `leave`. */
  enter(key: string, owner: string): Promise<void> | undefined {
    const slot = this.slots.get(key);
    const turn = turnIn(slot, owner);
    if (turn) return new Promise<void>((resolve) => (turn.next ??= []).push(resolve));
    const fresh: Turn = { owner, next: undefined };
    if (slot === undefined) this.slots.set(key, fresh);
    else if (slot instanceof Map) slot.set(owner, fresh);
    else
      this.slots.set(
        key,
        new Map([
          [slot.owner, slot],
          [owner, fresh],
        ]),
      );
    this.active++;
    return undefined;
  }

  /** True while an operation of `owner` on `key` is out (or waits its turn). */
  busy(key: string, owner: string): boolean {
    return turnIn(this.slots.get(key), owner) !== undefined;
  }

  /** Ends the owner's turn on `key`: the next operation in line runs, or the slot is freed. */
  leave(key: string, owner: string): void {
    const slot = this.slots.get(key);
    const turn = turnIn(slot, owner);
    if (slot === undefined || turn === undefined) return;
    const next = turn.next?.shift();
    if (next) {
      next();
      return;
    }
    if (slot instanceof Map) {
      slot.delete(owner);
      if (slot.size === 0) this.slots.delete(key);
    } else this.slots.delete(key);
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
