/** An item a {@link DueQueue} orders. The queue owns `queueIndex` (−1 when not queued). */
export interface DueItem {
  /** When the item is due, monotonic ms; change it only through {@link DueQueue.schedule}. */
  dueAt: number;
  /** Position in the queue's heap, −1 when not queued. Maintained by the queue. */
  queueIndex: number;
}

/**
 * An indexed binary min-heap on `dueAt`. Each item remembers its heap position,
 * so removing or re-keying one is O(log n) without a search, and a tick only
 * touches the items that are due (peek O(1), pop O(log n)).
 */
export class DueQueue<T extends DueItem> {
  readonly #heap: T[] = [];

  /** Number of queued items. */
  get size(): number {
    return this.#heap.length;
  }

  /** The queued items, in heap order (not due order). */
  items(): readonly T[] {
    return this.#heap;
  }

  /** The item due first, without removing it. */
  peek(): T | undefined {
    return this.#heap[0];
  }

  /** Removes and returns the item due first. */
  pop(): T | undefined {
    const first = this.#heap[0];
    if (first !== undefined) this.#removeAt(0);
    return first;
  }

  /** Queues `item` at `dueAt`, or moves it there if it is already queued. */
  schedule(item: T, dueAt: number): void {
    item.dueAt = dueAt;
    const index = item.queueIndex;
    if (index >= 0 && this.#heap[index] === item) {
      this.#siftUp(index);
      this.#siftDown(item.queueIndex);
      return;
    }
    item.queueIndex = this.#heap.length;
    this.#heap.push(item);
    this.#siftUp(item.queueIndex);
  }

  /** Takes `item` out of the queue; false if it was not queued. */
  remove(item: T): boolean {
    const index = item.queueIndex;
    if (index < 0 || this.#heap[index] !== item) return false;
    this.#removeAt(index);
    return true;
  }

  /** Empties the queue. */
  clear(): void {
    for (const item of this.#heap) item.queueIndex = -1;
    this.#heap.length = 0;
  }

  #removeAt(index: number): void {
    const heap = this.#heap;
    const removed = heap[index] as T;
    removed.queueIndex = -1;
    const last = heap.pop() as T;
    if (index === heap.length) return; // it was the last one
    heap[index] = last;
    last.queueIndex = index;
    this.#siftUp(index);
    this.#siftDown(last.queueIndex);
  }

  #siftUp(index: number): void {
    const heap = this.#heap;
    const item = heap[index] as T;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex] as T;
      if (parent.dueAt <= item.dueAt) break;
      heap[index] = parent;
      parent.queueIndex = index;
      index = parentIndex;
    }
    heap[index] = item;
    item.queueIndex = index;
  }

  #siftDown(index: number): void {
    const heap = this.#heap;
    const length = heap.length;
    const item = heap[index] as T;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      let child = left;
      if (right < length && (heap[right] as T).dueAt < (heap[left] as T).dueAt) child = right;
      const childItem = heap[child] as T;
      if (childItem.dueAt >= item.dueAt) break;
      heap[index] = childItem;
      childItem.queueIndex = index;
      index = child;
    }
    heap[index] = item;
    item.queueIndex = index;
  }
}
