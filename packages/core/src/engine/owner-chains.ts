/**
 * Runs the Redis operations of one owner on one key one at a time, in call
 * order. With at most one operation of an owner in flight, a replay after a
 * reconnect can only concern the last one, which the scripts recognise by its
 * operation id; and an undo queued inside an operation's turn runs before the
 * owner's next operation.
 */
export class OwnerChains {
  private readonly chains = new Map<string, Map<string, Promise<unknown>>>();

  /** Runs `operation` after every earlier operation of `owner` on `key` settled. */
  run<T>(key: string, owner: string, operation: () => Promise<T>): Promise<T> {
    let owners = this.chains.get(key);
    const before = owners?.get(owner);
    const run = before ? before.then(operation, operation) : operation();
    if (!owners) {
      owners = new Map();
      this.chains.set(key, owners);
    }
    owners.set(owner, run);
    // Forget the chain once its last operation settled (the common case: one at a time).
    const forget = (): void => {
      const current = this.chains.get(key);
      if (current?.get(owner) !== run) return;
      current.delete(owner);
      if (current.size === 0) this.chains.delete(key);
    };
    run.then(forget, forget);
    return run;
  }

  /** The last operation of every chain still running (close() waits for them). */
  inFlight(): Promise<unknown>[] {
    const result: Promise<unknown>[] = [];
    for (const owners of this.chains.values()) result.push(...owners.values());
    return result;
  }
}
