/**
 * A FIFO with cheap removal at the front: an array and a head index, compacted once the dead
 * prefix is both large and most of the array. A full analytics queue drops its oldest entry on
 * every new one, which `Array.prototype.shift` would make a copy of the whole queue each time.
 * A removed item's slot is cleared at once: the dead prefix grows to the queue's own length
 * before a compaction, and while it held its items a full queue kept twice its bound alive.
 */
export class Deque<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  /** The first `n` items, oldest first, left in place. */
  peek(n: number): T[] {
    // Slots from the head on are never cleared: every one holds an item.
    return this.#items.slice(this.#head, this.#head + n) as T[];
  }

  /** Removes up to `n` items from the front. */
  drop(n: number): void {
    const end = this.#head + Math.min(n, this.length);
    this.#items.fill(undefined, this.#head, end);
    this.#head = end;
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
  }
}
