import { describe, expect, it } from 'vitest';
import { DEFAULT_RRF_K, reciprocalRankFusion } from '../../src/memory/rrf.ts';

const id = (s: string) => s;

describe('reciprocalRankFusion', () => {
  it('sums 1/(k + rank) over the lists an item appears in', () => {
    const out = reciprocalRankFusion(
      [
        ['a', 'b', 'c'],
        ['c', 'a'],
      ],
      id,
      60,
    );
    const score = Object.fromEntries(out.map((r) => [r.item, r.score]));
    expect(score.a).toBeCloseTo(1 / 61 + 1 / 62, 12);
    expect(score.b).toBeCloseTo(1 / 62, 12);
    expect(score.c).toBeCloseTo(1 / 63 + 1 / 61, 12);
    expect(out.map((r) => r.item)).toEqual(['a', 'c', 'b']);
  });

  it('reports 1-based ranks per list, 0 when absent', () => {
    const out = reciprocalRankFusion(
      [
        ['a', 'b'],
        ['b', 'x'],
      ],
      id,
      1,
    );
    const ranks = Object.fromEntries(out.map((r) => [r.item, r.ranks]));
    expect(ranks).toEqual({ a: [1, 0], b: [2, 1], x: [0, 2] });
    // k = 1: b = 1/3 + 1/2, a = 1/2, x = 1/3
    expect(out.map((r) => [r.item, r.score])).toEqual([
      ['b', 1 / 3 + 1 / 2],
      ['a', 1 / 2],
      ['x', 1 / 3],
    ]);
  });

  it('counts only the first occurrence within a list, keeps the earliest list item, and breaks ties by first appearance', () => {
    const out = reciprocalRankFusion(
      [
        [
          { id: 'p', from: 1 },
          { id: 'p', from: 1 },
          { id: 'q', from: 1 },
        ],
        [
          { id: 'q', from: 2 },
          { id: 'p', from: 2 },
        ],
      ],
      (o) => o.id,
    );
    expect(out).toHaveLength(2);
    const p = out.find((r) => r.item.id === 'p')!;
    expect(p.item.from).toBe(1);
    expect(p.ranks).toEqual([1, 2]);
    expect(p.score).toBeCloseTo(1 / (DEFAULT_RRF_K + 1) + 1 / (DEFAULT_RRF_K + 2), 12);
    // q (ranks 3 and 1): 1/63 + 1/61 < p's 1/61 + 1/62.
    expect(out.map((r) => r.item.id)).toEqual(['p', 'q']);
    const tie = reciprocalRankFusion([['m'], ['n']], id);
    expect(tie.map((r) => r.item)).toEqual(['m', 'n']);
  });

  it('handles empty input', () => {
    expect(reciprocalRankFusion([], id)).toEqual([]);
    expect(reciprocalRankFusion([[], []], id)).toEqual([]);
  });
});
