// A first-in, first-out queue that takes from the front without Array.prototype.shift()
// (which copies the rest of the array each time): a head index walks the array, which is
// dropped once it has been read to the end.

import { emptyObjectArray } from './object-array.ts';

export class Fifo<T> {
  // Born holding objects, as every queue's array is then (lib/object-array.ts).
  #items: (T | undefined)[] = emptyObjectArray();
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  /** The oldest item, removed; undefined when the queue is empty. */
  shift(): T | undefined {
    if (this.#head === this.#items.length) return undefined;
    const item = this.#items[this.#head];
    // Let go of it: the array lives on until it has been read to the end.
    this.#items[this.#head++] = undefined;
    if (this.#head === this.#items.length) {
      this.#items = emptyObjectArray();
      this.#head = 0;
    }
    return item;
  }
}
