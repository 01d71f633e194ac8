/**
 * A Map that keeps at most `capacity` entries, dropping the least recently used: the bound on
 * what search caches per process, whatever the number of users, schemas and turns it meets.
 */
export class LruMap<K, V> {
  private readonly map = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.map.size;
  }

  /** The value, now the most recently used. */
  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, v);
    return v;
  }

  /** Whether the key is kept, without marking it used (a peek: the warm queue skips what is cached). */
  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    // Map iterates in insertion order: the first key is the least recently used.
    while (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K);
  }

  delete(key: K): void {
    this.map.delete(key);
  }
}
