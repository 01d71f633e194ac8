/**
 * Evidence recall as the LoCoMo paper measures retrieval: the share of a
 * question's evidence dialog ids found among what the top-k results carry
 * (for memgate, the union of the results' turnRefs), averaged per category
 * and overall.
 */

/** |evidence ∩ retrieved| / |evidence| (questions without evidence are not scored). */
export function evidenceRecall(evidence: readonly string[], retrieved: Iterable<string>): number {
  if (evidence.length === 0) return 0;
  const got = new Set(retrieved);
  let hit = 0;
  for (const e of evidence) if (got.has(e)) hit += 1;
  return hit / evidence.length;
}

/** Running means per category and overall. */
export class CategoryMeans {
  private readonly sums = new Map<string, { sum: number; n: number }>();

  /** Add one question's value under its category and under "overall". */
  add(category: string, value: number): void {
    for (const key of [category, 'overall']) {
      const s = this.sums.get(key) ?? { sum: 0, n: 0 };
      s.sum += value;
      s.n += 1;
      this.sums.set(key, s);
    }
  }

  /** Mean of a category (NaN-free: 0 questions → null). */
  mean(category: string): number | null {
    const s = this.sums.get(category);
    return s && s.n > 0 ? s.sum / s.n : null;
  }

  /** Questions counted in a category. */
  count(category: string): number {
    return this.sums.get(category)?.n ?? 0;
  }

  /** Plain object of means and counts, for the results file. */
  toJSON(): Record<string, { mean: number; n: number }> {
    return Object.fromEntries([...this.sums].map(([k, s]) => [k, { mean: s.sum / s.n, n: s.n }]));
  }
}
