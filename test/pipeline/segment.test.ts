import { describe, expect, it } from 'vitest';
import { segment } from '../../src/pipeline/compress-stage.ts';

describe('segment', () => {
  const isQ = (s: string) => s.endsWith('?');

  it('cuts every `size` turns when nothing asks', () => {
    expect(segment(['a', 'b', 'c', 'd', 'e', 'f', 'g'], 3)).toEqual([['a', 'b', 'c'], ['d', 'e', 'f'], ['g']]);
  });

  it('never ends a segment on a question whose answer follows: the pair is compressed together', () => {
    const turns = ['a', 'b', 'c', 'd', 'q?', 'answer', 'f', 'g'];
    const out = segment(turns, 5, isQ);
    expect(out).toEqual([
      ['a', 'b', 'c', 'd'],
      ['q?', 'answer', 'f', 'g'],
    ]);
    expect(out.flat()).toEqual(turns);
  });

  it('shrinks a segment to half its size at most, and a last question stays where it is', () => {
    expect(segment(['a?', 'b?', 'c?', 'd?', 'e?', 'f'], 4, isQ)).toEqual([
      ['a?', 'b?', 'c?', 'd?'],
      ['e?', 'f'],
    ]);
    expect(segment(['a', 'b', 'q?'], 3, isQ)).toEqual([['a', 'b', 'q?']]);
  });
});
