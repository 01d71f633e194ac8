import type { PackedVectors } from './packed-vectors.ts';

/**
 * Per-user packed matrices, least recently used evicted past `maxBytes`.
 * Entries carry the user's write generation, so a reader can tell a stale
 * entry (another connection wrote) from a fresh one with one point read.
 */
export class VectorCache {
  private readonly entries = new Map<string, PackedVectors>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The cached entry (marked most recently used), or undefined. */
  get(key: string): PackedVectors | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  /** Cache `entry` for `key`, replacing any previous one, then evict down to the budget. */
  put(key: string, entry: PackedVectors): void {
    this.invalidate(key);
    this.entries.set(key, entry);
    this.bytes += entry.byteLength;
    this.evict(key);
  }

  /** Apply `change` to a cached entry in place (no-op when the user is not cached). */
  update(key: string, change: (entry: PackedVectors) => void): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    const before = entry.byteLength;
    change(entry);
    this.bytes += entry.byteLength - before;
    this.evict(key);
  }

  /** Drop the user's entry. */
  invalidate(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.byteLength;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  private evict(keep: string): void {
    for (const [key, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) return;
      if (key === keep) continue;
      this.entries.delete(key);
      this.bytes -= entry.byteLength;
    }
  }
}
