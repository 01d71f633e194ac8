import { cosine } from './cosine.ts';

/**
 * Maximal marginal relevance: the order that trades a candidate's relevance against its
 * similarity to what already ranks above it (λ·score − (1−λ)·max cosine), so near-repeats of a
 * higher result make room for other evidence. Scores are kept, capped by the previous one so
 * rank and score never disagree.
 */
export function diversify<T extends { score: number }>(items: readonly T[], vectorOf: (t: T) => Float32Array, lambda: number): T[] {
  const left = [...items];
  const out: T[] = [];
  const nearest = left.map(() => 0);
  while (left.length > 0) {
    let best = 0;
    let bestValue = -Infinity;
    for (let i = 0; i < left.length; i++) {
      const value = lambda * left[i]!.score - (1 - lambda) * nearest[i]!;
      if (value > bestValue) [best, bestValue] = [i, value];
    }
    const [picked] = left.splice(best, 1);
    nearest.splice(best, 1);
    const v = vectorOf(picked!);
    for (let i = 0; i < left.length; i++) nearest[i] = Math.max(nearest[i]!, cosine(v, vectorOf(left[i]!)));
    out.push(picked!);
  }
  let ceiling = Infinity;
  return out.map((t) => {
    ceiling = Math.min(ceiling, t.score);
    return t.score === ceiling ? t : { ...t, score: ceiling };
  });
}
