/**
 * The retrieval floor: plain Okapi BM25 (k1 = 1.2, b = 0.75, non-negative IDF)
 * over raw turns, with lower-cased letter/digit tokens and no stemming or stop
 * words. Whatever memgate's memory does must beat this to be worth its cost.
 */

/** One ranked document. */
export interface Bm25Hit {
  id: string;
  score: number;
}

/** Split into lower-cased runs of letters and digits. */
export function bm25Tokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** An in-memory BM25 index over a fixed set of documents. */
export class Bm25Index {
  private readonly docs: Array<{ id: string; tf: Map<string, number>; length: number }> = [];
  private readonly df = new Map<string, number>();
  private totalLength = 0;

  constructor(
    private readonly k1 = 1.2,
    private readonly b = 0.75,
  ) {}

  /** Add one document. */
  add(id: string, text: string): void {
    const tokens = bm25Tokens(text);
    const tf = new Map<string, number>();
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const t of tf.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
    this.docs.push({ id, tf, length: tokens.length });
    this.totalLength += tokens.length;
  }

  /** Top-k documents for the query, best first (documents sharing no term are not returned). */
  search(query: string, k: number): Bm25Hit[] {
    const n = this.docs.length;
    if (n === 0) return [];
    const avgLength = this.totalLength / n;
    const terms = [...new Set(bm25Tokens(query))];
    const idf = new Map(
      terms.map((t) => {
        const df = this.df.get(t) ?? 0;
        return [t, Math.log(1 + (n - df + 0.5) / (df + 0.5))];
      }),
    );
    const hits: Bm25Hit[] = [];
    for (const d of this.docs) {
      let score = 0;
      for (const t of terms) {
        const f = d.tf.get(t);
        if (!f) continue;
        score += idf.get(t)! * ((f * (this.k1 + 1)) / (f + this.k1 * (1 - this.b + (this.b * d.length) / avgLength)));
      }
      if (score > 0) hits.push({ id: d.id, score });
    }
    hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
    return hits.slice(0, k);
  }
}
