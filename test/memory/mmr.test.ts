import { expect, it } from 'vitest';
import { diversify } from '../../src/memory/mmr.ts';

const v = (...xs: number[]) => Float32Array.from(xs);

it('lets other evidence pass a near-repeat of a higher result, keeping scores in rank order', () => {
  const items = [
    { id: 'budget', score: 0.9, vec: v(1, 0, 0) },
    { id: 'budget again', score: 0.88, vec: v(0.99, 0.14, 0) },
    { id: 'location', score: 0.8, vec: v(0, 1, 0) },
  ];
  const out = diversify(items, (x) => x.vec, 0.7);
  expect(out.map((x) => x.id)).toEqual(['budget', 'location', 'budget again']);
  // The repeat keeps its place below the one it made room for, capped to that one's score.
  expect(out.map((x) => x.score)).toEqual([0.9, 0.8, 0.8]);
});

it('at λ = 1 keeps the relevance order, and leaves distinct results in it', () => {
  const items = [
    { id: 'a', score: 0.9, vec: v(1, 0) },
    { id: 'b', score: 0.7, vec: v(1, 0) },
  ];
  expect(diversify(items, (x) => x.vec, 1).map((x) => x.id)).toEqual(['a', 'b']);
  const distinct = [
    { id: 'a', score: 0.9, vec: v(1, 0, 0) },
    { id: 'b', score: 0.8, vec: v(0, 1, 0) },
    { id: 'c', score: 0.7, vec: v(0, 0, 1) },
  ];
  expect(diversify(distinct, (x) => x.vec, 0.7).map((x) => x.id)).toEqual(['a', 'b', 'c']);
  expect(diversify([], (x: { score: number; vec: Float32Array }) => x.vec, 0.7)).toEqual([]);
});
