import { describe, expect, it } from 'vitest';
import { encoderView } from '../../src/text/encoder-view.ts';
import { FusedEmbedder } from '../../src/adapters/fused/index.ts';
import type { Embedder } from '../../src/ports/embedder.ts';

describe('what the sentence encoder reads of a memory text', () => {
  it('leaves out role tags and ISO dates with their lead-in, and nothing else', () => {
    expect(encoderView('Caroline (user) went to a support group on 2023-05-07 and it was so powerful, as of 2023-05-08.')).toBe('Caroline went to a support group and it was so powerful.');
    expect(encoderView('Asha (agent) is from Skyline Homes, as of 2026-12-04.')).toBe('Asha is from Skyline Homes.');
    expect(encoderView('Rajiv Kumar (user) said the budget is around 80 lakhs (interrupted), as of 2026-01-05.')).toBe('Rajiv Kumar said the budget is around 80 lakhs (interrupted).');
    expect(encoderView('Where does she want a flat?')).toBe('Where does she want a flat?');
    expect(encoderView('Built 2019-2021, 3 BHK, user (agent-side) notes')).toBe('Built 2019-2021, 3 BHK, user (agent-side) notes');
  });

  it('keeps a text that is nothing but a date (the encoder cannot read an empty one)', () => {
    expect(encoderView('2023-05-07')).toBe('2023-05-07');
  });

  it('is what the fused embedder gives the part it is set on; the other parts read the whole text', async () => {
    const seen: string[][] = [];
    const recorder = (id: string): Embedder => ({
      id,
      dimensions: 8,
      embed: async (texts) => {
        seen.push([id, ...texts]);
        return texts.map(() => new Float32Array(8).fill(1));
      },
    });
    const fused = new FusedEmbedder([
      { embedder: recorder('whole'), weight: 1 },
      { embedder: recorder('viewed'), weight: 1, costly: true, view: encoderView },
    ]);
    await fused.embed(['Asha (agent) is from Skyline Homes, as of 2026-12-04.']);
    expect(seen).toEqual([
      ['whole', 'Asha (agent) is from Skyline Homes, as of 2026-12-04.'],
      ['viewed', 'Asha is from Skyline Homes.'],
    ]);
  });
});
