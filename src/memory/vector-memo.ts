import type { Embedder } from '../ports/embedder.ts';

/**
 * Embeddings of texts search meets again and again (kept turns, schema field descriptions),
 * computed once per embedder and text, not per search. Bounded (least recently used goes
 * first): a search only needs the vectors of the users it is serving now.
 */
export class VectorMemo {
  private readonly memo = new Map<string, Float32Array>();

  constructor(private readonly max = 4096) {}

  /** One vector per text, in order; only texts not seen before reach the embedder, in one batch. */
  async vectors(embedder: Embedder, texts: readonly string[]): Promise<Float32Array[]> {
    const keyOf = (t: string) => `${embedder.id}\u0000${t}`;
    const missing = [...new Set(texts.filter((t) => !this.memo.has(keyOf(t))))];
    if (missing.length > 0) {
      const fresh = await embedder.embed(missing);
      missing.forEach((t, i) => {
        const v = fresh[i];
        if (v) this.memo.set(keyOf(t), v);
      });
    }
    const out = texts.map((t) => {
      const key = keyOf(t);
      const v = this.memo.get(key) ?? new Float32Array(0);
      // Re-insert: Map order is recency order.
      this.memo.delete(key);
      this.memo.set(key, v);
      return v;
    });
    while (this.memo.size > this.max) this.memo.delete(this.memo.keys().next().value!);
    return out;
  }
}
