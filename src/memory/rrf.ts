/** The RRF constant of Cormack et al. (2009); config `memory.rrfK` overrides it. */
export const DEFAULT_RRF_K = 60;

/** One fused item: its RRF score and its 1-based rank in each input list (0 = absent from that list). */
export interface FusedItem<T> {
  item: T;
  score: number;
  ranks: number[];
}

/**
 * Reciprocal rank fusion: score(d) = Σ over lists containing d of 1 / (k + rank).
 * Rank-based, so it fuses legs whose raw scores are incomparable (cosine vs BM25).
 * An item's first occurrence within a list counts; the item object kept is the one
 * from the earliest list. Ties keep first-seen order, so the result is deterministic.
 */
export function reciprocalRankFusion<T>(lists: readonly (readonly T[])[], idOf: (t: T) => string, k = DEFAULT_RRF_K): FusedItem<T>[] {
  const fused = new Map<string, FusedItem<T>>();
  lists.forEach((list, li) => {
    list.forEach((item, index) => {
      const id = idOf(item);
      let entry = fused.get(id);
      if (!entry) {
        entry = { item, score: 0, ranks: lists.map(() => 0) };
        fused.set(id, entry);
      }
      if (entry.ranks[li] !== 0) return;
      entry.ranks[li] = index + 1;
      entry.score += 1 / (k + index + 1);
    });
  });
  return [...fused.values()].sort((a, b) => b.score - a.score);
}
