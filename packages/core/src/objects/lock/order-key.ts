/**
 * Where a lock sorts in the multi-locks' global order: its full Redis key, the same in every process. The lock
 * owns it (it knows its key); a multi-lock reads it from its members, so the arrow points from multi-lock to lock.
 */
export const ORDER_KEY: unique symbol = Symbol.for('@org/rlock/order-key');
