/** A bounded map that forgets the least recently used entry: the simulator's caches. */
export class Lru<K, V> {
  readonly #map = new Map<K, V>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get(key: K): V | undefined {
    const v = this.#map.get(key);
    if (v !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }

  set(key: K, value: V): V {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#capacity) {
      const oldest = this.#map.keys().next();
      if (!oldest.done) this.#map.delete(oldest.value);
    }
    return value;
  }

  /** The cached value, or `make()` cached. */
  getOr(key: K, make: () => V): V {
    const v = this.get(key);
    return v !== undefined ? v : this.set(key, make());
  }

  get size(): number {
    return this.#map.size;
  }
}
