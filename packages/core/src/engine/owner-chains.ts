/** One owner's turn on one key with others in line: made when the first waits (a free line is the owner's id alone). */
interface Turn {
  readonly owner: string;
  readonly next: (() => void)[];
}

/** A key's turns: one owner's (its id while nobody waits, else its Turn), or by owner (null: nobody waits). */
type Slot = string | Turn | Map<string, Turn | null>;

/**
 * One owner's operations on one key, one at a time in call order: a replay after a reconnect can only be the last one
 * (known by its op id), and an undo lands before the next operation. An uncontended turn costs no promise, nor any object.
 */
export class OwnerChains {
  /** A key's turn when one owner has one (the usual case: no Map), else its turns by owner. */
  private readonly slots = new Map<string, Slot>();
  private active = 0;
  private idleWaiters: (() => void)[] = [];

  /** Undefined when the turn is free (go on at once), else resolves when it comes; every `enter` needs exactly one `leave`. */
  enter(key: string, owner: string): Promise<void> | undefined {
    const slot = this.slots.get(key);
    if (slot === undefined) this.slots.set(key, owner);
    else if (slot instanceof Map) {
      const turn = slot.get(owner);
      if (turn !== undefined) return this.queue(turn ?? this.lineIn(slot, owner));
      slot.set(owner, null);
    } else {
      const busy = typeof slot === 'string' ? slot : slot.owner;
      if (busy === owner) return this.queue(typeof slot === 'string' ? this.lineAt(key, owner) : slot);
      this.slots.set(
        key,
        new Map<string, Turn | null>([
          [busy, typeof slot === 'string' ? null : slot],
          [owner, null],
        ]),
      );
    }
    this.active++;
    return undefined;
  }

  private queue(turn: Turn): Promise<void> {
    return new Promise<void>((resolve) => turn.next.push(resolve));
  }

  private lineAt(key: string, owner: string): Turn {
    const turn: Turn = { owner, next: [] };
    this.slots.set(key, turn);
    return turn;
  }

  private lineIn(slot: Map<string, Turn | null>, owner: string): Turn {
    const turn: Turn = { owner, next: [] };
    slot.set(owner, turn);
    return turn;
  }

  /** True while an operation of `owner` on `key` is out (or waits its turn). */
  busy(key: string, owner: string): boolean {
    const slot = this.slots.get(key);
    if (slot === undefined) return false;
    if (slot instanceof Map) return slot.has(owner);
    return (typeof slot === 'string' ? slot : slot.owner) === owner;
  }

  /** Ends the owner's turn on `key`: the next operation in line runs, or the slot is freed. */
  leave(key: string, owner: string): void {
    const slot = this.slots.get(key);
    if (slot === undefined) return;
    if (slot instanceof Map) {
      const turn = slot.get(owner);
      if (turn === undefined) return;
      const next = turn?.next.shift();
      if (next) {
        next();
        return;
      }
      slot.delete(owner);
      if (slot.size === 0) this.slots.delete(key);
    } else {
      if ((typeof slot === 'string' ? slot : slot.owner) !== owner) return;
      const next = typeof slot === 'string' ? undefined : slot.next.shift();
      if (next) {
        next();
        return;
      }
      this.slots.delete(key);
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
