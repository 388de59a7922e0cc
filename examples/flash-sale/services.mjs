// @ts-check
/**
 * The "Java-style" service layer of the flash-sale demo. Each service takes the
 * lock it needs, the way a Redisson user writes `lock.lock(); try { … } finally
 * { lock.unlock(); }`, without knowing whether its caller already holds it: the
 * lock is reentrant within one task, so `OrderService.purchase` holding
 * `item:<id>` and calling `InventoryService.reserve`, which takes `item:<id>`
 * again, is a nested hold, not a deadlock.
 */

/**
 * @typedef {object} LockLike
 * @property {(options?: { leaseMs?: number, waitMs?: number, signal?: AbortSignal }) => Promise<void>} lock
 * @property {() => Promise<void>} unlock
 */

/**
 * @typedef {object} LockClient
 * @property {(name: string) => LockLike} getLock
 */

/**
 * @typedef {object} DataStore The plain ioredis calls the services use.
 * @property {(key: string) => Promise<string | null>} get
 * @property {(key: string, value: string) => Promise<unknown>} set
 * @property {(key: string, field: string, increment: number) => Promise<number>} hincrby
 */

/** Key names of the demo's own data (not rlock's keys). */
export class ShopKeys {
  /** @param {string} prefix */
  constructor(prefix) {
    this.prefix = prefix;
  }

  /** @param {number} itemId */
  stock(itemId) {
    return `${this.prefix}:stock:${itemId}`;
  }

  /** Hash item id → number of orders taken: a ledger kept apart from the stock counter. */
  orders() {
    return `${this.prefix}:orders`;
  }
}

/** Lock name of one item: every service that touches the item's stock takes it. */
export const itemLockName = (/** @type {number} */ itemId) => `item:${itemId}`;

export class InventoryService {
  /**
   * @param {LockClient} locks
   * @param {DataStore} store
   * @param {ShopKeys} keys
   * @param {{ unsafe?: boolean }} [options] unsafe: skip the lock, to show what it prevents
   */
  constructor(locks, store, keys, options = {}) {
    this.locks = locks;
    this.store = store;
    this.keys = keys;
    this.unsafe = options.unsafe ?? false;
    /** Stock values below zero this service has seen: any at all means the lock failed. */
    this.negativeStockSeen = 0;
  }

  /**
   * Takes one unit of `itemId` out of stock.
   * The read-modify-write below is deliberately NOT atomic (GET, then SET): two
   * concurrent reservations would both read the same value and sell one unit
   * twice. Only the lock makes it correct.
   * @param {number} itemId
   * @returns {Promise<boolean>} false when sold out
   */
  async reserve(itemId) {
    const lock = this.locks.getLock(itemLockName(itemId));
    if (!this.unsafe) await lock.lock(); // reentrant: OrderService.purchase already holds it
    try {
      const stock = Number(await this.store.get(this.keys.stock(itemId)));
      if (stock < 0) this.negativeStockSeen++;
      if (stock <= 0) return false;
      await this.store.set(this.keys.stock(itemId), String(stock - 1));
      return true;
    } finally {
      if (!this.unsafe) await lock.unlock();
    }
  }
}

export class OrderService {
  /**
   * @param {LockClient} locks
   * @param {DataStore} store
   * @param {ShopKeys} keys
   * @param {InventoryService} inventory
   * @param {{ unsafe?: boolean }} [options]
   */
  constructor(locks, store, keys, inventory, options = {}) {
    this.locks = locks;
    this.store = store;
    this.keys = keys;
    this.inventory = inventory;
    this.unsafe = options.unsafe ?? false;
  }

  /**
   * Buys one unit of `itemId`: reserve it, then record the order.
   * Must run inside a task (`client.task`): the lock is owned by the task.
   * @param {number} itemId
   * @returns {Promise<boolean>} false when sold out
   */
  async purchase(itemId) {
    const lock = this.locks.getLock(itemLockName(itemId));
    if (!this.unsafe) await lock.lock(); // no leaseMs: the watchdog keeps the lease alive
    try {
      if (!(await this.inventory.reserve(itemId))) return false;
      await this.store.hincrby(this.keys.orders(), String(itemId), 1);
      return true;
    } finally {
      if (!this.unsafe) await lock.unlock();
    }
  }
}
